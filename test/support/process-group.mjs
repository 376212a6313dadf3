// Child processes started in a process group of their own (`spawn(…, { detached: true })`), so
// that a run which has to be stopped is stopped whole: the child and every process it started
// (vitest's workers, npm's scripts), which may be spinning in a synchronous loop.
//
// Plain JavaScript, so that test/compat/run.mjs (a script run by Node alone) and the tests share it.

/** Kills `child`'s whole process group (SIGKILL); the child alone where it has no group of its own. */
export function killGroup(child) {
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // No such group (already gone, or not started detached): the child itself, if still there.
    child.kill('SIGKILL');
  }
}
