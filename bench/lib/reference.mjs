// The reference: the retry loop a careful engineer writes by hand in ten lines — full jitter on
// 100 ms × 2^(attempt−1), capped at 20 s, five attempts, as ebb's default policy. Every figure
// reports each library as a ratio to it: what a library costs beyond doing it yourself.

/** Full jitter (Brooker, AWS Architecture Blog, 2015): U[0, min(cap, base · 2^(attempt−1))). */
export const fullJitter = (attempt) => Math.random() * Math.min(20_000, 100 * 2 ** (attempt - 1));

export async function reference(operation, attempts = 5, delayMs = fullJitter) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await operation();
    } catch (error) {
      if (attempt >= attempts) throw error;
      await new Promise((resolve) => setTimeout(resolve, delayMs(attempt)));
    }
  }
}
