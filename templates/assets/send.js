// rrsite respondent page: what is sent. The request (or downloaded file) for a body, byte for byte
// what the review shows, and the POST with its retries.

import { config, form, t, target } from "./shared.js";

const SEND_ATTEMPTS = 3;

function netlifyFields(body) {
  const fields = new URLSearchParams();
  fields.append("form-name", form.getAttribute("name") || config.survey);
  fields.append("survey", body.survey);
  fields.append("version", body.version);
  fields.append("respondent", body.respondent);
  for (const [id, value] of Object.entries(body.answers)) {
    if (value === null || value === undefined) continue;
    fields.append(id, Array.isArray(value) ? JSON.stringify(value) : String(value));
  }
  // two-group designs: the group as "<id>.group", the collector's export column
  for (const [id, group] of Object.entries(body.groups || {})) fields.append(`${id}.group`, String(group));
  return fields;
}

/** The request (or file) for a body, byte for byte what the review shows. */
export function outgoing(body) {
  if (target === "netlify") {
    const fields = netlifyFields(body);
    return {
      url: new URL(window.location.pathname, document.baseURI).href,
      type: "application/x-www-form-urlencoded",
      payload: fields.toString(),
      shown: Array.from(fields.entries()).map(([key, value]) => `${key}=${value}`).join("\n"),
    };
  }
  const json = JSON.stringify(body, null, 2);
  const url = target === "endpoint" ? config.submit.url : (config.submit && config.submit.url) || "/api/submissions";
  return { url: new URL(url, document.baseURI).href, type: "application/json", payload: json, shown: json };
}

export function destinationText(request) {
  if (target === "netlify") return t("will_send_netlify");
  if (target === "download") return t("will_send_download");
  if (target === "endpoint") return t("will_send_endpoint", { url: request.url });
  return t("will_send_collector", { url: new URL(request.url).pathname });
}

class SendError extends Error {
  constructor(message, retryable, status = null, field = null) {
    super(message);
    this.retryable = retryable;
    this.status = status;
    this.field = field; // the collector's `field` of a refusal ("survey" for a full survey)
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export async function post(request, { onRetry = () => {} } = {}) {
  for (let attempt = 1; ; attempt += 1) {
    try {
      let response;
      try {
        response = await fetch(request.url, {
          method: "POST",
          headers: { "Content-Type": request.type },
          body: request.payload,
          credentials: target === "endpoint" ? "omit" : "same-origin",
          cache: "no-store",
        });
      } catch {
        throw new SendError(t("send_failed_network"), true);
      }
      if (response.ok) {
        await response.text().catch(() => ""); // drain the body so the request completes
        return response;
      }
      const retryable = response.status >= 500 || response.status === 408 || response.status === 429;
      const refusal = await response.json().catch(() => null);
      const field = refusal && typeof refusal.field === "string" ? refusal.field : null;
      throw new SendError(t("send_failed_status", { status: response.status }), retryable, response.status, field);
    } catch (error) {
      if (!error.retryable || attempt >= SEND_ATTEMPTS) throw error;
      onRetry();
      await sleep(600 * attempt);
    }
  }
}

export function downloadFile(record, request) {
  const filename = `${config.survey}-${record.body.respondent.slice(0, 8)}.json`;
  const link = document.createElement("a");
  link.href = URL.createObjectURL(new Blob([request.payload], { type: "application/json" }));
  link.download = filename;
  link.hidden = true;
  document.body.append(link);
  link.click();
  setTimeout(() => { URL.revokeObjectURL(link.href); link.remove(); }, 60000);
  return filename;
}
