/** The public event page of an event. */
export const eventPublicUrl = (baseUrl: string, uid: string) => `${baseUrl}/e/${uid}`;
