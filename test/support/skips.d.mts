export type Need = 'redis-server' | 'nginx' | 'haproxy' | 'google-http-client' | 'grpc-java' | 'chromium';
export const NEEDS: Readonly<Record<Need, { readonly what: string; readonly packages: readonly string[] }>>;
export const SKIPS_FILE_ENV: string;
export function recordSkip(need: Need): void;
export function skipLine(records: readonly { suite: string; need: Need }[], root: boolean): string | undefined;
