// The portal against a real catalog holding tests/data/netcdf/cmip5 (33 files named: odd_file.nc by its time axis, 0 refused).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, resultRows, screenshot, test } from "./fixtures";
import { ndnsci, publishSample, SAMPLE, sha256File, startCatalog } from "./harness";

test("search: the first results, then free text", async ({ page }) => {
  await page.goto("/");
  await expect(resultRows(page)).toHaveCount(33);
  await expect(page.getByRole("heading", { name: "33 files", exact: true })).toBeVisible();
  await expect(page.getByRole("button", { name: "Catalog reachable · 33 files", exact: true })).toBeVisible();
  await screenshot(page, "search");

  await page.getByRole("searchbox", { name: "Search", exact: true }).fill("tasmax rcp85");
  await page.getByRole("searchbox", { name: "Search", exact: true }).press("Enter");
  await expect(resultRows(page)).toHaveCount(10);
  for (const text of await resultRows(page).locator(".col-file").allTextContents()) {
    expect(text).toMatch(/^tasmax_Amon_.*_rcp85_/);
  }
  await expect(page).toHaveURL(/\?q=tasmax\+rcp85$/);
});

test("facets: groups with live counts, OR within a facet, AND across", async ({ page }) => {
  await page.goto("/");
  const model = page.getByRole("group", { name: "model", exact: true });
  const experiment = page.getByRole("group", { name: "experiment", exact: true });
  await expect(experiment.getByRole("checkbox", { name: "historical, 10 files", exact: true })).toBeVisible();
  // each group, and the button that folds it, is named exactly after its facet (no drawn ▾)
  for (const name of ["institute", "model", "experiment", "frequency", "realm", "table", "ensemble", "variable"]) {
    const group = page.getByRole("group", { name, exact: true });
    await expect(group).toBeVisible();
    await expect(group.getByRole("button", { name, exact: true })).toHaveAttribute("aria-expanded", "true");
  }
  const version = page.getByRole("group", { name: "version", exact: true });
  await version.getByRole("button", { name: "version", exact: true }).click(); // starts folded
  await expect(version.getByRole("button", { name: "version", exact: true })).toHaveAttribute("aria-expanded", "true");

  await page.getByRole("group", { name: "variable", exact: true }).getByRole("checkbox", { name: "hfls, 10 files", exact: true }).check();
  await expect(resultRows(page)).toHaveCount(10);
  // live counts: under variable=hfls every file is historical
  await expect(experiment.getByRole("checkbox", { name: "historical, 10 files", exact: true })).toBeVisible();
  await expect(experiment.getByRole("checkbox", { name: /^rcp85, .*$/ })).toHaveCount(0);
  // the variable facet still counts its other values (ESGF style)
  await expect(page.getByRole("group", { name: "variable", exact: true }).getByRole("checkbox", { name: "tasmax, 10 files", exact: true })).toBeVisible();

  await model.getByRole("button", { name: "Show all 9", exact: true }).click();
  await model.getByRole("checkbox", { name: "CNRM-CM5, 2 files", exact: true }).check();
  await expect(resultRows(page)).toHaveCount(2);
  await model.getByRole("checkbox", { name: "IPSL-CM5A-LR, 1 file", exact: true }).check();
  await expect(resultRows(page)).toHaveCount(3); // OR within model, AND with variable
  await expect(page.getByRole("list", { name: "Active filters", exact: true })).toContainText("model: IPSL-CM5A-LR");
  await screenshot(page, "facets");
});

test("URL round trip: reload and a shared link restore the whole query", async ({ page, context }) => {
  await page.goto("/");
  await page.getByRole("group", { name: "experiment", exact: true }).getByRole("checkbox", { name: "rcp85, 10 files", exact: true }).check();
  await page.getByRole("combobox", { name: "Sort by", exact: true }).selectOption("-size");
  await page.getByRole("combobox", { name: "Per page", exact: true }).selectOption("25");
  await page.getByRole("textbox", { name: "From", exact: true }).fill("2050");
  await page.getByRole("button", { name: "Apply", exact: true }).click();
  await expect(page).toHaveURL(/experiment=rcp85/);
  const url = page.url();
  expect(new URL(url).search).toBe("?start=2050&experiment=rcp85&sort=-size&limit=25");
  const before = await resultRows(page).locator(".col-file").allTextContents();
  expect(before.length).toBeGreaterThan(0);

  await page.reload();
  // counts under start=2050 (the experiment facet ignores its own filter)
  await expect(page.getByRole("group", { name: "experiment", exact: true }).getByRole("checkbox", { name: "rcp85, 6 files", exact: true })).toBeChecked();
  await expect(page.getByRole("combobox", { name: "Sort by", exact: true })).toHaveValue("-size");
  await expect(page.getByRole("textbox", { name: "From", exact: true })).toHaveValue("2050");
  await expect.poll(() => resultRows(page).locator(".col-file").allTextContents()).toEqual(before);

  const other = await context.newPage();
  await other.goto(url);
  await expect.poll(() => resultRows(other).locator(".col-file").allTextContents()).toEqual(before);

  await page.goBack(); // history: each change is a step back
  await expect(page.getByRole("textbox", { name: "From", exact: true })).toHaveValue("");
});

test("NDN name: component autocompletion narrows the results", async ({ page }) => {
  await page.goto("/");
  const box = page.getByRole("combobox", { name: "NDN name", exact: true });
  await box.fill("/CMIP5/output1/M");
  const options = page.getByRole("listbox", { name: "Name completions", exact: true }).getByRole("option");
  await expect(options).toHaveText([/^MIROC\/\s*1$/, /^MOHC\/\s*1$/, /^MPI-M\/\s*3$/]);
  for (const [i, name] of ["MIROC/, 1 file", "MOHC/, 1 file", "MPI-M/, 3 files"].entries()) {
    await expect(options.nth(i)).toHaveAccessibleName(name);
  }
  await screenshot(page, "autocomplete");
  await box.press("ArrowDown");
  await box.press("ArrowDown");
  await box.press("ArrowDown");
  await box.press("Enter");
  await expect(box).toHaveValue("/CMIP5/output1/MPI-M/");
  await page.getByRole("button", { name: "Narrow to this name", exact: true }).click();
  await expect(resultRows(page)).toHaveCount(3);
  await expect(page).toHaveURL(/prefix=%2FCMIP5%2Foutput1%2FMPI-M/);
  for (const name of await resultRows(page).locator(".col-name").allTextContents()) {
    expect(name.startsWith("/CMIP5/output1/MPI-M/")).toBe(true);
  }
});

test("namespace tree: counts per prefix, selecting one narrows the results", async ({ page }) => {
  await page.goto("/");
  const tree = page.getByRole("tree", { name: "Namespace", exact: true });
  const cmip5 = tree.getByRole("treeitem", { name: "CMIP5", exact: true });
  await expect(cmip5).toContainText("33");
  await cmip5.getByText("CMIP5", { exact: true }).click();
  const output1 = tree.getByRole("treeitem", { name: "output1", exact: true });
  await output1.getByText("output1", { exact: true }).click();
  const ipsl = tree.getByRole("treeitem", { name: "IPSL", exact: true });
  await expect(ipsl).toContainText("4");
  await ipsl.getByText("IPSL", { exact: true }).click();
  await expect(ipsl).toHaveAttribute("aria-selected", "true");
  await expect(resultRows(page)).toHaveCount(4);
  await expect(page).toHaveURL(/prefix=%2FCMIP5%2Foutput1%2FIPSL$/);
  await screenshot(page, "tree");

  // keyboard: down to the first model, open it
  await ipsl.focus();
  await page.keyboard.press("ArrowDown");
  await expect(tree.getByRole("treeitem", { name: "IPSL-CM5A-LR", exact: true })).toBeFocused();
});

test("metadata panel: attributes, variables with units, time, corrections, checksum", async ({ page }) => {
  await page.goto("/?model=BNU-ESM&experiment=esmControl");
  // two: this file and odd_file.nc, named from its contents (fgco2 ... 145001-145002)
  await expect(resultRows(page)).toHaveCount(2);
  const fileName = "fgco2_Omon_BNU-ESM_esmControl_r1i1p1_145001-170712.nc";
  const row = resultRows(page).filter({ hasText: fileName });
  await expect(row.locator(".col-file")).toHaveText(fileName); // its name needed no correction
  await row.click();
  const panel = page.getByRole("region", { name: "Metadata", exact: true });
  await expect(panel.getByRole("heading", { name: fileName, exact: true })).toBeVisible();
  // the checksum is the file's own
  const file = join(SAMPLE, "output1/BNU/BNU-ESM/esmControl/mon/ocnBgchem/cfMon/r1i1p1/v20120503/fgco2/fgco2_Omon_BNU-ESM_esmControl_r1i1p1_145001-170712.nc");
  await expect(panel).toContainText(sha256File(file));
  await expect(panel).toContainText("noleap");
  await expect(panel).toContainText("1450-01-01 – 1450-03-01");
  await expect(panel).toContainText("dir-file-mismatch");
  await expect(panel).toContainText("table directory 'cfMon' disagrees with the file name's 'Omon'");
  // the file as it was found: its original name, and its path below the published directory
  await expect(panel.getByText("Original file name", { exact: true }).locator("xpath=following-sibling::dd[1]")).toHaveText(fileName);
  await expect(panel.getByText("Original path", { exact: true }).locator("xpath=following-sibling::dd[1]")).toHaveText(
    `output1/BNU/BNU-ESM/esmControl/mon/ocnBgchem/cfMon/r1i1p1/v20120503/fgco2/${fileName}`,
  );
  const variables = panel.getByRole("table", { name: "Variables", exact: true });
  const fgco2 = variables.getByRole("row").filter({ has: page.getByRole("rowheader", { name: "fgco2", exact: true }) });
  await expect(fgco2).toContainText("kg m-2 s-1");
  await expect(panel.getByRole("table", { name: "Dimensions", exact: true })).toContainText("lat");
  await expect(panel.getByLabel("Global attributes", { exact: true })).toContainText("GCESS,BNU,Beijing,China");
  await expect(page).toHaveURL(/_file=/);
  await screenshot(page, "metadata");

  await page.reload(); // the open file is part of the URL
  await expect(page.getByRole("region", { name: "Metadata", exact: true })).toContainText("dir-file-mismatch");
  await page.getByRole("button", { name: "Close metadata", exact: true }).click();
  await expect(page.getByRole("region", { name: "Metadata", exact: true })).toHaveCount(0);
});

test("a renamed file shows its original name beside the canonical one", async ({ page }) => {
  // `ndnsci translate --json | ndnsci publish --records`: a climatology named '_clim' (the DRS
  // says '-clim'), in a catalog of its own
  const dir = mkdtempSync(join(tmpdir(), "ndnsci-webui-original-"));
  const db = `sqlite:///${join(dir, "catalog.db")}`;
  const original = "novar1_Amon_HadGEM2-ES_rcp45_r1i1p1_201512-204011_clim.nc";
  const canonical = "novar1_Amon_HadGEM2-ES_rcp45_r1i1p1_201512-204011-clim.nc";
  const records = join(dir, "records.jsonl");
  writeFileSync(records, (await ndnsci(["translate", "--json", `/archive/old/${original}`])).stdout);
  await ndnsci(["publish", "--records", records, "--db", db]);
  const catalog = await startCatalog(db);
  try {
    await page.goto(`${catalog.url}/?q=novar1`);
    await expect(resultRows(page)).toHaveCount(1);
    const cell = resultRows(page).first().locator(".col-file");
    await expect(cell.getByRole("button", { name: `${original}: show metadata`, exact: true })).toHaveText(original);
    await expect(cell).toContainText(`published as → ${canonical}`);
    await expect(resultRows(page).first().locator(".col-name")).toContainText(canonical);
    await cell.getByRole("button").click();
    const panel = page.getByRole("region", { name: "Metadata", exact: true });
    await expect(panel.getByRole("heading", { name: canonical, exact: true })).toBeVisible();
    await expect(panel.getByText("Original file name", { exact: true }).locator("xpath=following-sibling::dd[1]")).toHaveText(
      `${original} (published as ${canonical})`,
    );
    await expect(panel).toContainText("clim-suffix");
  } finally {
    await catalog.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("cart: survives reload, downloads a manifest, copies the fetch command", async ({ page, context }) => {
  await context.grantPermissions(["clipboard-read", "clipboard-write"]);
  await page.goto("/?variable=co3");
  await expect(resultRows(page)).toHaveCount(4);
  const names = await resultRows(page).locator(".col-name").allTextContents();
  await resultRows(page).nth(0).getByRole("checkbox").check();
  await resultRows(page).nth(1).getByRole("checkbox").check();
  await expect(page.getByRole("button", { name: "Cart, 2 files", exact: true })).toContainText("2");

  await page.reload();
  await expect(page.getByRole("button", { name: "Cart, 2 files", exact: true })).toContainText("2");
  await expect(resultRows(page).nth(0).getByRole("checkbox")).toBeChecked();
  await page.getByRole("button", { name: "Cart, 2 files", exact: true }).click();
  const cart = page.getByRole("region", { name: "Cart", exact: true });
  await expect(cart.getByRole("list", { name: "Files in the cart", exact: true }).getByRole("listitem")).toHaveCount(2);
  await screenshot(page, "cart");

  const [download] = await Promise.all([page.waitForEvent("download"), cart.getByRole("button", { name: "Download manifest", exact: true }).click()]);
  expect(download.suggestedFilename()).toBe("ndnsci-manifest.jsonl");
  const lines = readFileSync((await download.path())!, "utf8").trim().split("\n").map((l) => JSON.parse(l));
  expect(lines.map((l) => l.name)).toEqual(names.slice(0, 2));
  for (const line of lines) {
    expect(line.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(line.path).toBe(line.name.slice(1));
  }

  await expect(cart.getByText("ndnsci fetch --manifest ndnsci-manifest.jsonl")).toBeVisible();
  await cart.getByRole("button", { name: "Copy command", exact: true }).click();
  await expect(cart.getByRole("button", { name: "Copied", exact: true })).toBeVisible();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe("ndnsci fetch --manifest ndnsci-manifest.jsonl");

  // a manifest of every result of the search
  await cart.getByRole("button", { name: "Close cart", exact: true }).click();
  const [all] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: "Manifest of all 4", exact: true }).click()]);
  expect(readFileSync((await all.path())!, "utf8").trim().split("\n")).toHaveLength(4);
});

test("empty results and refused input are explained", async ({ page }) => {
  await page.goto("/?q=nosuchvariable&model=HadGEM2-ES");
  await expect(page.getByText("No files match this search")).toBeVisible();
  await expect(page.getByRole("table", { name: "Results", exact: true })).toHaveCount(0);
  await screenshot(page, "empty");
  await page.getByRole("button", { name: "Remove filter text: nosuchvariable", exact: true }).first().click();
  await expect(resultRows(page)).toHaveCount(1);

  await page.goto("/?modle=HadGEM2-ES");
  const alert = page.getByRole("alert").filter({ hasText: "Search was refused" });
  await expect(alert).toContainText("modle");
  await expect(alert).toContainText("Known facets:");

  await page.goto("/");
  await page.getByRole("textbox", { name: "From", exact: true }).fill("soon");
  await page.getByRole("button", { name: "Apply", exact: true }).click();
  await expect(page.getByRole("alert")).toContainText('"soon" is not a date');
});

test("a stopped catalog is explained, never a blank page", async ({ page }) => {
  const dir = mkdtempSync(join(tmpdir(), "ndnsci-webui-stop-"));
  const db = `sqlite:///${join(dir, "catalog.db")}`;
  await publishSample(db);
  const catalog = await startCatalog(db);
  try {
    await page.goto(catalog.url);
    await expect(resultRows(page)).toHaveCount(33);
    await catalog.stop();
    await page.getByRole("searchbox", { name: "Search", exact: true }).fill("tasmax");
    await page.getByRole("searchbox", { name: "Search", exact: true }).press("Enter");
    const alert = page.getByRole("alert").filter({ hasText: "Search failed: the catalog is not reachable" });
    await expect(alert).toBeVisible({ timeout: 15_000 });
    await expect(alert).toContainText("ndnsci catalog serve");
    await expect(page.getByRole("button", { name: "Catalog unreachable", exact: true })).toBeVisible({ timeout: 15_000 });
    await expect(page.getByRole("searchbox", { name: "Search", exact: true })).toBeVisible();
    await screenshot(page, "catalog-down");
  } finally {
    await catalog.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
