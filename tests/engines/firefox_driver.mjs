// Drives Debian's firefox-esr over WebDriver BiDi with puppeteer-core (no geckodriver), for the
// cross-engine tests (tests/engines/drivers.py). One long-lived process; JSON lines on stdin:
//   {"id": 1, "op": "goto", "url": "..."}            -> {"id": 1, "ok": true, "value": null}
//   {"op": "eval", "expression": "..."}               value: the expression's JSON value
//   {"op": "click", "selector": "..."}                a real (trusted) click
//   {"op": "viewport", "width": 390, "height": 844}
//   {"op": "screenshot", "path": "..."}               full page PNG
//   {"op": "reload"} | {"op": "new_context"} | {"op": "errors"} (console errors, page errors)
//   {"op": "new_tab"}                                 a new tab of the same context; the old one closed
//   {"op": "quit"}
// Errors come back as {"id", "ok": false, "error": "..."}.
import puppeteer from "puppeteer-core";
import { createInterface } from "node:readline";

const executablePath = process.env.FIREFOX || "/usr/bin/firefox-esr";
const browser = await puppeteer.launch({
  browser: "firefox",
  executablePath,
  headless: true,
  protocolTimeout: 120_000,
  // A private profile each run; no telemetry or update checks.
  extraPrefsFirefox: { "app.update.enabled": false, "datareporting.policy.dataSubmissionEnabled": false },
});
let context = null;
let page = null;
let errors = [];
let viewport = { width: 1000, height: 900 };

async function openPage() {
  page = await context.newPage();
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(`console: ${message.text()}`);
  });
  page.on("pageerror", (error) => errors.push(`page error: ${error.message || error}`));
  await page.setViewport(viewport);
}

async function newContext() {
  if (context) await context.close();
  context = await browser.createBrowserContext();
  errors = [];
  await openPage();
}

async function newTab() {
  const old = page;
  await openPage();
  await old.close();
}

const ops = {
  async goto({ url }) { await page.goto(url, { waitUntil: "load" }); return null; },
  async reload() { await page.reload({ waitUntil: "load" }); return null; },
  async eval({ expression }) { return await page.evaluate(expression); },
  async click({ selector }) { await page.click(selector); return null; },
  async viewport({ width, height }) {
    viewport = { width, height };
    await page.setViewport(viewport);
    return null;
  },
  async screenshot({ path }) { await page.screenshot({ path, fullPage: true }); return null; },
  async new_context() { await newContext(); return null; },
  async new_tab() { await newTab(); return null; },
  async errors() { return errors; },
  async version() { return await browser.version(); },
};

await newContext();
process.stdout.write(JSON.stringify({ id: 0, ok: true, value: await browser.version() }) + "\n");

const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  if (!line.trim()) continue;
  const message = JSON.parse(line);
  if (message.op === "quit") break;
  let reply;
  try {
    const value = await ops[message.op](message);
    reply = { id: message.id, ok: true, value: value === undefined ? null : value };
  } catch (error) {
    reply = { id: message.id, ok: false, error: String(error && error.message ? error.message : error) };
  }
  process.stdout.write(JSON.stringify(reply) + "\n");
}
await browser.close();
process.exit(0);
