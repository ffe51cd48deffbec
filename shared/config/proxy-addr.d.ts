// proxy-addr (Express's own dependency, which compiles `trust proxy`) ships no types.
declare module 'proxy-addr' {
  /** Compiles trusted addresses, subnets and names; throws a TypeError naming the first bad entry. */
  export function compile(val: string | string[]): (addr: string, i: number) => boolean;
}
