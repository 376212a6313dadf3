/* Reference vectors for ebb's seeded(): SplitMix64 seeding and xoshiro128** 1.1, written from
 * the algorithms' published descriptions (https://prng.di.unimi.it/). Build and run:
 *   cc -O2 -o /tmp/xo xoshiro128ss.c && /tmp/xo
 * Prints, for each seed, the first eight 32-bit outputs and the first four doubles (53 bits
 * from two outputs: (a >> 5) * 2^26 + (b >> 6), divided by 2^53). */
#include <stdint.h>
#include <stdio.h>

static uint64_t sm;
static uint64_t splitmix64(void) {
  uint64_t z = (sm += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
static uint32_t s[4];
static inline uint32_t rotl(uint32_t x, int k) { return (x << k) | (x >> (32 - k)); }
static uint32_t next(void) {
  uint32_t result = rotl(s[1] * 5, 7) * 9;
  uint32_t t = s[1] << 9;
  s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3];
  s[2] ^= t; s[3] = rotl(s[3], 11);
  return result;
}
static void seed(uint64_t x) {
  sm = x;
  uint64_t a = splitmix64(), b = splitmix64();
  s[0] = (uint32_t)a; s[1] = (uint32_t)(a >> 32); s[2] = (uint32_t)b; s[3] = (uint32_t)(b >> 32);
}
int main(void) {
  uint64_t seeds[] = {0, 1, 42, 0xffffffffffffffffULL};
  for (int i = 0; i < 4; i++) {
    sm = seeds[i];
    uint64_t first = splitmix64(), second = splitmix64(); /* two statements: argument order is unspecified */
    printf("splitmix64 seed %llu: %llu %llu\n", (unsigned long long)seeds[i], (unsigned long long)first, (unsigned long long)second);
    seed(seeds[i]);
    printf("uint32 seed %llu:", (unsigned long long)seeds[i]);
    for (int j = 0; j < 8; j++) printf(" %u", next());
    printf("\n");
    seed(seeds[i]);
    printf("double seed %llu:", (unsigned long long)seeds[i]);
    for (int j = 0; j < 4; j++) { uint32_t a = next(), b = next(); printf(" %.17g", ((double)(a >> 5) * 67108864.0 + (double)(b >> 6)) / 9007199254740992.0); }
    printf("\n");
  }
  /* The plain state {1, 2, 3, 4}, as in the reference's own examples. */
  s[0] = 1; s[1] = 2; s[2] = 3; s[3] = 4;
  printf("uint32 state 1,2,3,4:");
  for (int j = 0; j < 8; j++) printf(" %u", next());
  printf("\n");
  return 0;
}
