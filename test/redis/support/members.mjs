// Member processes for the fleet tests: each a Node.js script that prints `ready` once loaded and
// connected, reads the fleet's start (ms since the epoch) from stdin (see rate-fleet.mjs's
// readyForStart), runs, and prints one JSON line as its last line. Plain JavaScript, so that the
// benchmarks can use it too.
import { spawn } from 'node:child_process';

/**
 * Starts `node <script> ...args` for each entry of `argsList`; once every one is ready, tells them
 * all one start `leadMs` later, calls `onStart(ms)`, and resolves with their parsed reports (in
 * order). A process that exits non-zero or prints no JSON rejects the whole run with its stderr.
 * `children` (optional) receives the ChildProcess objects, so a test can signal them by PID.
 */
export async function runMembers(script, argsList, { leadMs = 300, onStart = () => {}, children = [] } = {}) {
  const runs = argsList.map((args, i) => {
    const child = spawn(process.execPath, [script, ...args.map(String)], { stdio: ['pipe', 'pipe', 'pipe'] });
    children.push(child);
    let out = '';
    let err = '';
    let readyResolve;
    const ready = new Promise((resolve) => {
      readyResolve = resolve;
    });
    child.stdout.on('data', (d) => {
      out += d;
      if (out.startsWith('ready\n')) readyResolve();
    });
    child.stderr.on('data', (d) => {
      err = (err + d).slice(-4000);
    });
    const done = new Promise((resolve, reject) => {
      child.once('exit', (code) => {
        readyResolve();
        if (code !== 0) reject(new Error(`member ${i} exited ${code}: ${err}`));
        else {
          try {
            resolve(JSON.parse(out.trim().split('\n').pop() ?? ''));
          } catch (error) {
            reject(new Error(`member ${i} printed no report (${error}): ${out.slice(-500)} ${err}`));
          }
        }
      });
    });
    done.catch(() => {});
    return { child, ready, done };
  });
  await Promise.all(runs.map((r) => r.ready));
  const start = Date.now() + leadMs;
  for (const r of runs) r.child.stdin.end(`${start}\n`);
  onStart(start);
  return Promise.all(runs.map((r) => r.done));
}
