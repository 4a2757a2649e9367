import { render, screen } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";
import { ErrorBoundary } from "./ErrorBoundary";

function Broken(): never {
  throw new Error("unexpected record shape");
}

describe("ErrorBoundary", () => {
  it("shows what broke instead of a blank page", () => {
    vi.spyOn(console, "error").mockImplementation(() => {});
    render(
      <ErrorBoundary area="metadata panel">
        <Broken />
      </ErrorBoundary>,
    );
    expect(screen.getByRole("alert")).toHaveTextContent("The metadata panel stopped working");
    expect(screen.getByRole("alert")).toHaveTextContent("unexpected record shape");
    expect(screen.getByRole("button", { name: "Reload this part" })).toBeInTheDocument();
  });
});
