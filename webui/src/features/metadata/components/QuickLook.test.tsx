import { fireEvent, screen } from "@testing-library/react";
import { http, HttpResponse } from "msw";
import { describe, expect, it } from "vitest";
import { ORIGIN, server } from "@/testing/server";
import { renderWithClient } from "@/testing/render";
import { QuickLook } from "./QuickLook";

const NAME = "/CMIP5/output1/BNU/x/fgco2_Omon_BNU-ESM_esmControl_r1i1p1_145001-170712.nc";

describe("QuickLook", () => {
  it("shows the first variable's map and time series, described, and follows the controls", async () => {
    renderWithClient(<QuickLook name={NAME} />);
    expect(screen.getByText(/Loading the quick look/)).toBeInTheDocument();
    const map = await screen.findByAltText("Map of Surface Downward CO2 Flux (fgco2) in kg m-2 s-1 at 1450-01-16");
    expect(map.getAttribute("src")).toMatch(/^data:image\/png;base64,/);
    expect(await screen.findByAltText(/^Time series of the area-weighted global mean of Surface Downward CO2 Flux \(fgco2\)/)).toBeInTheDocument();

    fireEvent.change(screen.getByRole("slider", { name: "Time step" }), { target: { value: "2" } });
    expect(await screen.findByAltText(/^Map of .*\(fgco2\) .* at 1450-03-16$/)).toBeInTheDocument();

    fireEvent.change(screen.getByRole("combobox", { name: "Variable" }), { target: { value: "area" } });
    expect(await screen.findByAltText("Map of cell area (area) in m2 at step 0")).toBeInTheDocument();
    expect(screen.queryByRole("slider", { name: "Time step" })).not.toBeInTheDocument(); // one step
  });

  it("says why when the gateway cannot draw the file", async () => {
    server.use(
      http.get(`${ORIGIN}/api/v1/quicklook/*`, () =>
        HttpResponse.json({ detail: "x.nc is not a netCDF file", code: "not-netcdf" }, { status: 415 }),
      ),
    );
    renderWithClient(<QuickLook name={NAME} />);
    expect(await screen.findByRole("alert")).toHaveTextContent("No quick look: x.nc is not a netCDF file");
  });
});
