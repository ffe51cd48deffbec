import type { paths as Generated } from './schema.gen';
import type { PendingPaths } from './pending';

/** Every path the dashboard calls: the gateway's OpenAPI document, plus the contract of routes it does not declare yet. */
export type Paths = Generated & Omit<PendingPaths, keyof Generated>;
