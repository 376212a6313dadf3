// A driver for test/fidelity/google.test.ts: runs Google's own ExponentialBackOff (the jar of
// Debian's libgoogle-http-client-java) over cases read from stdin and prints what it returns.
// It lives in com.google.api.client.util to reach the package-private getRandomValueFromInterval,
// so the test chooses the random values (the class itself calls Math.random()).
//
// Input, one case per line:  initial factor multiplier maxInterval maxElapsed ; r1 r2 … ; u1 u2 …
//   r_i: the random value of the i-th wait; u_i: the duration of attempt i in microseconds.
// Output, one line per case:  REFUSED  (the builder threw IllegalArgumentException), or the waits
//   in ms separated by spaces, with S where nextBackOffMillis() returned STOP (the line ends there).
// The clock starts at 0 when the policy is built; attempt i takes u_i, then the run sleeps its wait.
package com.google.api.client.util;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;

public final class EbbGoogleDriver {
  private static long nanos;

  public static void main(String[] args) throws Exception {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    StringBuilder out = new StringBuilder();
    NanoClock clock = () -> nanos;
    String line;
    while ((line = in.readLine()) != null) {
      if (line.isEmpty()) continue;
      String[] parts = line.split(";", -1);
      String[] o = parts[0].trim().split(" ");
      String[] randoms = parts[1].trim().split(" ");
      String[] durations = parts[2].trim().split(" ");
      nanos = 0;
      ExponentialBackOff backOff;
      try {
        backOff =
            new ExponentialBackOff.Builder()
                .setInitialIntervalMillis(Integer.parseInt(o[0]))
                .setRandomizationFactor(Double.parseDouble(o[1]))
                .setMultiplier(Double.parseDouble(o[2]))
                .setMaxIntervalMillis(Integer.parseInt(o[3]))
                .setMaxElapsedTimeMillis(Integer.parseInt(o[4]))
                .setNanoClock(clock)
                .build();
      } catch (IllegalArgumentException refused) {
        out.append("REFUSED\n");
        continue;
      }
      double factor = backOff.getRandomizationFactor();
      StringBuilder row = new StringBuilder();
      for (int i = 0; i < durations.length; i++) {
        nanos += Long.parseLong(durations[i]) * 1000L;
        int interval = backOff.getCurrentIntervalMillis();
        if (backOff.nextBackOffMillis() == BackOff.STOP) {
          row.append(row.length() == 0 ? "S" : " S");
          break;
        }
        int wait =
            ExponentialBackOff.getRandomValueFromInterval(
                factor, Double.parseDouble(randoms[i % randoms.length]), interval);
        if (row.length() > 0) row.append(' ');
        row.append(wait);
        nanos += wait * 1_000_000L;
      }
      out.append(row).append('\n');
    }
    System.out.print(out);
  }
}
