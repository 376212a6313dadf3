import type { ChildProcess } from 'node:child_process';
/** Runs member processes with one common start; resolves with their last JSON lines, in order. */
export function runMembers<T = unknown>(
  script: string,
  argsList: readonly (readonly (string | number)[])[],
  options?: { leadMs?: number; onStart?: (startMs: number) => void; children?: ChildProcess[] },
): Promise<T[]>;
