// rrsite respondent page: the bridge to the randomizer worker (worker.js: Pyodide running
// rrsite/core). The true answers go to the worker in `respond` and only the reports come back.

import { $, config, t } from "./shared.js";

const STARTUP_TIMEOUT_S = 120;

export class Randomizer {
  constructor() {
    this.pending = new Map();
    this.nextId = 1;
    // Declining consent stops the runtime (no byte more is fetched); agreeing starts it again.
    document.addEventListener("rrsite:consent-declined", () => this.stop());
    document.addEventListener("rrsite:consent-agreed", () => {
      if (this.state === "stopped") this.start();
    });
    this.start();
  }

  /** Start the worker: Pyodide and rrsite/core begin downloading at once. */
  start() {
    this.state = "loading";
    this.ready = new Promise((resolve, reject) => {
      this.resolveReady = resolve;
      this.rejectReady = reject;
    });
    this.ready.catch(() => {});
    const box = $("rr-runtime");
    if (box && box.dataset.state === "stopped") box.hidden = false;
    this.showProgress("loading", 0);
    try {
      this.worker = new Worker(new URL(config.worker_url, document.baseURI), { type: "module" });
    } catch (error) {
      this.fail("error", error.message);
      return;
    }
    this.worker.addEventListener("message", (event) => this.onMessage(event.data || {}));
    this.worker.addEventListener("error", (event) => {
      event.preventDefault();
      this.fail("error", event.message || "the randomizer did not load");
    });
    this.timer = setTimeout(() => this.fail("timeout"), STARTUP_TIMEOUT_S * 1000);
    this.worker.postMessage({
      type: "init",
      pyodideUrl: new URL(config.pyodide_url, document.baseURI).href,
      coreUrl: new URL(config.core_url, document.baseURI).href,
      coreHash: config.core_hash,
      pyodideLock: config.pyodide_lock,
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
      this.fail(message.reason, message.message);
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

  fail(reason, detail) {
    if (this.state !== "loading") return;
    clearTimeout(this.timer);
    this.state = "failed";
    const why =
      reason === "timeout" ? t("runtime_timeout", { seconds: STARTUP_TIMEOUT_S })
        : reason === "blocked" ? t("runtime_blocked")
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
        reject(new Error(this.failure || this.state));
        return;
      }
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ ...message, id });
    });
  }
}
