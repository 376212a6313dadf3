/**
 * A seeded generator for the harness (client start times, and Math.random in the outage
 * figure, so that every library's jitter is reproducible): SplitMix32, the 32-bit variant of
 * Steele, Lea & Flood's SplitMix (OOPSLA 2014): a Weyl sequence through a two-round
 * multiply-xorshift hash (constants from Chris Wellons' hash-prospector). Returns a function
 * giving numbers in [0, 1). Not for anything but reproducible benchmark inputs.
 */
export function splitmix32(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x9e3779b9) >>> 0;
    let z = state;
    z = Math.imul(z ^ (z >>> 16), 0x21f0aaad);
    z = Math.imul(z ^ (z >>> 15), 0x735a2d97);
    z ^= z >>> 15;
    return (z >>> 0) / 4_294_967_296;
  };
}
