import type { paths } from './schema.gen';

/** Every path the dashboard calls, as the gateway's OpenAPI document declares it. */
export type Paths = paths;
