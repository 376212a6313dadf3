import { describe, expect, it } from 'vitest';
import { unhandled } from './unhandled.js';

describe('the unhandled-rejection trap', () => {
  it('records a rejection nobody handled (so the afterEach check would fail the test)', () => {
    const reason = new Error('nobody caught me');
    process.emit('unhandledRejection', reason, Promise.resolve());
    expect(unhandled).toContain(reason);
    unhandled.splice(0); // this test's own rejection was staged; clear it so the check passes
  });
});
