import { describe, expect, it } from "vitest";
import { setLatency } from "../../src/tune/edit.js";

describe("setLatency: only the latency values change", () => {
  it("replaces values of a flow mapping, comments and spacing kept", () => {
    const text = [
      "# a policy",
      "version: 1",
      "dependency: inventory",
      "latency: { p50: 15ms, p95: 30ms, p99: 60ms, p999: 120ms, rps: 100 }   # measured in March",
      "timeout: { total: 1s }                    # attempt derived",
      "",
    ].join("\n");
    expect(setLatency(text, { p50: "12ms", p99: "71ms", rps: "140" })).toEqual({
      text: text
        .replace("p50: 15ms", "p50: 12ms")
        .replace("p99: 60ms", "p99: 71ms")
        .replace("rps: 100", "rps: 140"),
    });
  });

  it("adds missing keys in the language's order, to flow and block mappings", () => {
    expect(
      setLatency("latency: { p99: 60ms }\n", { p50: "9ms", p95: "20ms", p999: "1.2s" }),
    ).toEqual({
      text: "latency: { p50: 9ms, p95: 20ms, p99: 60ms, p999: 1.2s }\n",
    });
    const block = [
      "latency:",
      "  p99: 60ms   # from the dashboard",
      "  # rps at peak",
      "  rps: 10",
      "operations: {}",
      "",
    ].join("\n");
    expect(setLatency(block, { p50: "9ms", p99: "70ms", p999: "90ms" })).toEqual({
      text: [
        "latency:",
        "  p50: 9ms",
        "  p99: 70ms   # from the dashboard",
        "  p999: 90ms",
        "  # rps at peak",
        "  rps: 10",
        "operations: {}",
        "",
      ].join("\n"),
    });
  });

  it("fills an empty flow mapping", () => {
    expect(setLatency("latency: {}\n", { p50: "9ms", rps: "3" })).toEqual({
      text: "latency: { p50: 9ms, rps: 3 }\n",
    });
  });

  it("adds a latency line after transport when there is none", () => {
    const text = "version: 1\ndependency: a\ntransport: http   # plain fetch\noperations: {}\n";
    expect(setLatency(text, { p50: "9ms", rps: "3" })).toEqual({
      text: "version: 1\ndependency: a\ntransport: http   # plain fetch\nlatency: { p50: 9ms, rps: 3 }\noperations: {}\n",
    });
  });

  it("refuses a latency that is not a mapping", () => {
    expect(setLatency("latency: 5ms\n", { p50: "9ms" })).toEqual({
      error: "`latency` is not a mapping",
    });
  });
});
