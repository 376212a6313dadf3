import type { ChildProcess } from 'node:child_process';
export function killGroup(child: ChildProcess): void;
