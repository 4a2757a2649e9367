import { describe, expect, it } from "vitest";
import { encodeName } from "./routes";

describe("routes", () => {
  it("percent-encodes each name component once", () => {
    expect(encodeName("/CMIP5/output1/a b%2Fc.nc")).toBe("CMIP5/output1/a%20b%252Fc.nc");
    expect(encodeName("CMIP5/x.nc")).toBe("CMIP5/x.nc");
  });
});
