export const BINARIES: { readonly nginx: string; readonly haproxy: string };
export const INSTALL: string;
export function available(): { found: string[]; missing: string[]; hint: string };
/** Whether the limiter is installed; records the calling file's skip when it is not. */
export function haveLimiter(kind: 'nginx' | 'haproxy'): boolean;
export function freePort(): Promise<number>;
export interface Limiter {
  readonly kind: 'nginx' | 'haproxy';
  readonly pid: number;
  readonly port: number;
  url(path?: string): string;
  stop(): Promise<void>;
}
export function startLimiter(
  kind: 'nginx' | 'haproxy',
  options: { ratePerSecond: number; burst?: number; retryAfter?: number; rateLimit?: boolean },
): Promise<Limiter>;
