import { render, screen } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { describe, expect, it, vi } from "vitest";
import { TimeRange } from "./TimeRange";

describe("TimeRange", () => {
  it("applies years, months and days as the catalog reads them", async () => {
    const onApply = vi.fn();
    const user = userEvent.setup();
    render(<TimeRange start="" end="" onApply={onApply} />);
    await user.type(screen.getByRole("textbox", { name: "From" }), "1850-01");
    await user.type(screen.getByRole("textbox", { name: "To" }), "20051231");
    await user.click(screen.getByRole("button", { name: "Apply" }));
    expect(onApply).toHaveBeenCalledWith("1850-01", "20051231");
  });

  it("explains what is not a date and applies nothing", async () => {
    const onApply = vi.fn();
    const user = userEvent.setup();
    render(<TimeRange start="" end="" onApply={onApply} />);
    await user.type(screen.getByRole("textbox", { name: "From" }), "last year");
    await user.click(screen.getByRole("button", { name: "Apply" }));
    expect(screen.getByRole("alert")).toHaveTextContent('"last year" is not a date');
    expect(onApply).not.toHaveBeenCalled();
  });

  it("refuses a range that ends before it starts", async () => {
    const onApply = vi.fn();
    const user = userEvent.setup();
    render(<TimeRange start="2000" end="1900" onApply={onApply} />);
    await user.click(screen.getByRole("button", { name: "Apply" }));
    expect(screen.getByRole("alert")).toHaveTextContent("after its end");
    expect(onApply).not.toHaveBeenCalled();
  });

  it("accepts a range inside one year", async () => {
    const onApply = vi.fn();
    const user = userEvent.setup();
    render(<TimeRange start="2000-03" end="2000" onApply={onApply} />);
    await user.click(screen.getByRole("button", { name: "Apply" }));
    expect(onApply).toHaveBeenCalledWith("2000-03", "2000");
  });
});
