// A driver for test/fidelity/grpc.test.ts: grpc-java's own connection backoff
// (io.grpc.internal.ExponentialBackoffPolicy, the grpc-core jar of Debian's libgrpc-java) with
// the random values the test chooses. In io.grpc.internal to reach the package-private setRandom.
//
// Input, one case per line: r1 r2 … (the nextDouble() of each wait).
// Output, one line per case: the waits in nanoseconds, one per random value.
package io.grpc.internal;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Random;

public final class EbbGrpcBackoffDriver {
  private static final class Scripted extends Random {
    private final double[] values;
    private int next;

    Scripted(double[] values) {
      this.values = values;
    }

    @Override
    public double nextDouble() {
      return values[next++];
    }
  }

  public static void main(String[] args) throws Exception {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    StringBuilder out = new StringBuilder();
    String line;
    while ((line = in.readLine()) != null) {
      if (line.isEmpty()) continue;
      String[] parts = line.trim().split(" ");
      double[] values = new double[parts.length];
      for (int i = 0; i < parts.length; i++) values[i] = Double.parseDouble(parts[i]);
      ExponentialBackoffPolicy policy = new ExponentialBackoffPolicy().setRandom(new Scripted(values));
      for (int i = 0; i < values.length; i++) {
        if (i > 0) out.append(' ');
        out.append(policy.nextBackoffNanos());
      }
      out.append('\n');
    }
    System.out.print(out);
  }
}
