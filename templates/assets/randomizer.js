// rrsite respondent page: the bridge to the randomizer worker (worker.js: Pyodide running
// rrsite/core). The true answers go to the worker in `respond` and only the reports come back.
//
// Pinned code: a Worker has no integrity attribute, so the worker's script is fetched first with
// the SHA-384 the page was built with (config.integrity.worker) and started only when it matched;
// the worker checks the runtime and the core bundle the same way (config.integrity).

import { $, config, t } from "./shared.js";

const STARTUP_TIMEOUT_S = 120;

/** The SRI value ("sha384-<base64>") of bytes. */
async function sri384(bytes) {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-384", bytes));
  let binary = "";
  for (const byte of digest) binary += String.fromCharCode(byte);
  return "sha384-" + btoa(binary);
}

/**
 * Why the pinned fetch of the worker's script threw: the server sends other bytes than the pinned
 * ones ("integrity", final), or nothing, or the pinned bytes now (the first download broke off).
 */
async function whyRefused(url, pin, name, error) {
  try {
    const response = await fetch(url, { credentials: "same-origin", cache: "no-store" });
    if (!response.ok) return ["error", `${name}: HTTP ${response.status}`];
    if ((await sri384(await response.arrayBuffer())) !== pin) return ["integrity", name];
  } catch {
    // no answer at all
  }
  return ["error", `${name}: ${error.message}`];
}

export class Randomizer {
  constructor() {
    this.pending = new Map();
    this.nextId = 1;
    // Declining consent stops the runtime (no byte more is fetched); agreeing starts it again.
    document.addEventListener("rrsite:consent-declined", () => this.stop());
    document.addEventListener("rrsite:consent-agreed", () => {
      if (this.state === "stopped") this.begin();
    });
    this.begin();
  }

  /** Start (again): Pyodide and rrsite/core begin downloading at once. */
  begin() {
    this.state = "loading";
    this.retried = false;
    this.generation = (this.generation || 0) + 1;
    this.ready = new Promise((resolve, reject) => {
      this.resolveReady = resolve;
      this.rejectReady = reject;
    });
    this.ready.catch(() => {});
    const box = $("rr-runtime");
    if (box && box.dataset.state === "stopped") box.hidden = false;
    this.showProgress("loading", 0);
    this.timer = setTimeout(() => this.fail("timeout"), STARTUP_TIMEOUT_S * 1000);
    this.start(this.generation);
  }

  /** Check the worker's script against its pin, then start it. */
  async start(generation) {
    const url = new URL(config.worker_url, document.baseURI);
    const pins = config.integrity || {};
    const name = url.pathname.split("/").pop();
    if (!pins.worker) {
      this.fail("integrity", name);
      return;
    }
    let failure = null;
    try {
      // mode "same-origin", as the Worker's own request: WebKit refuses to start a worker from the
      // response of a fetch in another mode ("Cross-origin script load denied").
      const response = await fetch(url, { integrity: pins.worker, credentials: "same-origin", mode: "same-origin" });
      if (response.ok) await response.arrayBuffer();
      else failure = ["error", `${name}: HTTP ${response.status}`];
    } catch (error) {
      failure = await whyRefused(url, pins.worker, name, error);
    }
    if (this.state !== "loading" || generation !== this.generation) return; // stopped meanwhile
    if (failure) {
      this.retryOrFail(...failure); // a file that did not come is asked for once more
      return;
    }
    try {
      this.worker = new Worker(url, { type: "module" });
    } catch (error) {
      this.fail("error", error.message);
      return;
    }
    this.worker.addEventListener("message", (event) => this.onMessage(event.data || {}));
    this.worker.addEventListener("error", (event) => {
      event.preventDefault();
      this.retryOrFail("error", event.message || "the randomizer did not load");
    });
    this.worker.postMessage({
      type: "init",
      pyodideUrl: new URL(config.pyodide_url, document.baseURI).href,
      coreUrl: new URL(config.core_url, document.baseURI).href,
      coreHash: config.core_hash,
      integrity: { core: pins.core, runtime: pins.runtime },
      pyodideLock: config.pyodide_lock,
      coreModules: config.core_modules,
    });
  }

  showProgress(stage, value) {
    const text = $("rr-runtime-text");
    const bar = $("rr-runtime-progress");
    const box = $("rr-runtime");
    if (box) box.dataset.state = stage;
    if (bar) bar.value = value;
    if (text) text.textContent = t(`runtime_${stage}`);
    document.documentElement.dataset.rrRuntime = stage === "failed" ? "failed" : stage === "ready" ? "ready" : "loading";
  }

  onMessage(message) {
    if (message.type === "progress" && this.state === "loading") {
      this.showProgress(message.stage, message.stage === "downloading" ? 1 : 2);
    } else if (message.type === "ready" && this.state === "loading") {
      clearTimeout(this.timer);
      this.state = "ready";
      performance.mark("rr-ready");
      this.showProgress("ready", 3);
      this.resolveReady();
    } else if (message.type === "failed") {
      this.retryOrFail(message.reason, message.message);
    } else if (message.type === "result") {
      const pending = this.pending.get(message.id);
      if (!pending) return;
      this.pending.delete(message.id);
      if (message.error) pending.reject(new Error(message.error));
      else pending.resolve(message.results);
    }
  }

  /** Stop the worker now: terminating it aborts its downloads and its start. */
  stop() {
    if (this.state !== "loading" && this.state !== "ready") return;
    clearTimeout(this.timer);
    this.state = "stopped";
    if (this.worker) this.worker.terminate();
    this.worker = null;
    const box = $("rr-runtime");
    if (box) {
      box.dataset.state = "stopped";
      box.hidden = true;
    }
    document.documentElement.dataset.rrRuntime = "stopped";
    for (const pending of this.pending.values()) pending.reject(new Error("stopped"));
    this.pending.clear();
    this.rejectReady(new Error("stopped"));
  }

  /**
   * A start that broke down (reason "error": not a policy that blocks WebAssembly, not a file
   * that differs from its pin, not the time limit) is tried once more in a fresh worker before
   * the respondent is told: WebKit has been seen to fail Pyodide's start now and then ("Out of
   * bounds memory access") where the next start works, and a file the server could not send a
   * moment ago may come now. The files already fetched come from the browser's cache.
   */
  retryOrFail(reason, detail) {
    if (reason !== "error" || this.state !== "loading" || this.retried) {
      this.fail(reason, detail);
      return;
    }
    this.retried = true;
    try {
      performance.mark("rr-start-retried", { detail: String(detail) });
    } catch {
      // a browser without User Timing's detail: the retry goes on unmarked
    }
    if (this.worker) this.worker.terminate();
    this.worker = null;
    this.generation += 1;
    this.start(this.generation);
  }

  fail(reason, detail) {
    if (this.state !== "loading") return;
    clearTimeout(this.timer);
    this.state = "failed";
    const why =
      reason === "timeout" ? t("runtime_timeout", { seconds: STARTUP_TIMEOUT_S })
        : reason === "blocked" ? t("runtime_blocked")
          : reason === "integrity" ? t("runtime_integrity", { file: detail || "?" })
            : t("runtime_error", { message: detail || reason });
    this.failure = t("runtime_failed", { reason: why });
    this.showProgress("failed", 0);
    const text = $("rr-runtime-text");
    if (text) {
      text.textContent = this.failure;
      text.setAttribute("role", "alert");
    }
    if (this.worker) this.worker.terminate();
    for (const pending of this.pending.values()) pending.reject(new Error(this.failure));
    this.pending.clear();
    this.rejectReady(new Error(this.failure));
  }

  respond(items) {
    return this.call({ type: "respond", items });
  }

  /** A message to the worker (respond, blind, finalize) and its answer's `results`. */
  call(message) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      if (!this.worker) {
        reject(new Error(this.failure || "not ready"));
        return;
      }
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ ...message, id });
    });
  }
}
