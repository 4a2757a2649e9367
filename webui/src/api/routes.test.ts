import { describe, expect, it } from "vitest";
import { encodeName, routes } from "./routes";

describe("routes", () => {
  it("percent-encodes each name component once", () => {
    expect(encodeName("/CMIP5/output1/a b%2Fc.nc")).toBe("CMIP5/output1/a%20b%252Fc.nc");
    expect(routes.file("/CMIP5/x.nc")).toBe("/api/v1/files/CMIP5/x.nc");
  });

  it("builds query strings", () => {
    expect(routes.autocomplete("/CMIP5/", 10)).toBe("/api/v1/autocomplete?prefix=%2FCMIP5%2F&limit=10");
    expect(routes.search(new URLSearchParams())).toBe("/api/v1/search");
  });
});
