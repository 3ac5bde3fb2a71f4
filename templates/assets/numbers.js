// Randomized number questions (issue 21): the true number is read from an input without a name,
// checked against the question's range, handed to the randomizer (rrsite.core.numbers in the
// worker, coins from crypto.getRandomValues) and cleared. Only the report is sent or stored.
// page.js calls the hooks below (window.rrsiteNumbers); this file is loaded before it.

const config = JSON.parse(document.getElementById("rr-config").textContent);
const byId = new Map((config.questions || []).map((q) => [q.id, q]));

let numberFormat = null;
/** A number as the page's language writes it (grouping, up to 4 decimals). */
function show(value, q) {
  if (value === null || value === undefined || value === "") return "";
  const number = Number(value);
  if (!Number.isFinite(number)) return String(value);
  if (!numberFormat) numberFormat = new Intl.NumberFormat(document.documentElement.lang || "en", { maximumFractionDigits: 4 });
  const text = numberFormat.format(number);
  return q && q.unit ? `${text} ${q.unit}` : text;
}

function percent(p) {
  return new Intl.NumberFormat(document.documentElement.lang || "en", { style: "percent", maximumFractionDigits: 1 }).format(p);
}

function isNumber(q) {
  return Boolean(q && q.sensitive && q.type === "number");
}

function inputOf(q) {
  return document.getElementById(`q-${q.id}-input`);
}

function innocuousOf(q) {
  return document.getElementById(`q-${q.id}-innocuous-input`);
}

/** One typed number, checked: {value} or {error}; {} when empty. */
function parse(input, q, t, range) {
  const raw = input.value.trim();
  if (raw === "") return input.validity && input.validity.badInput ? { error: t("error_number") } : {};
  const value = Number(raw);
  if (!Number.isFinite(value)) return { error: t("error_number") };
  if (q.integer && !Number.isInteger(value)) return { error: t("error_integer") };
  if (range) {
    const low = q.min !== null && q.min !== undefined ? q.min : null;
    const high = q.max !== null && q.max !== undefined ? q.max : null;
    if ((low !== null && value < low) || (high !== null && value > high)) {
      if (low !== null && high !== null) return { error: t("number_error_range", { min: show(low), max: show(high, q) }) };
      if (low !== null) return { error: t("error_min", { min: show(low) }) };
      return { error: t("error_max", { max: show(high) }) };
    }
  }
  return { value, text: raw };
}

/** readForm's hook: {error} or {item} (for the worker) or {} (unanswered, not required). */
function read(q, t) {
  const input = inputOf(q);
  if (!input) return { error: t("error_required") };
  const truth = parse(input, q, t, true);
  if (truth.error) return truth;
  if (truth.value === undefined) return q.required ? { error: t("error_required") } : {};
  let innocuous;
  const other = innocuousOf(q);
  if (other) {
    const answer = parse(other, q, t, false);
    if (answer.error) return answer;
    if (answer.value === undefined) return { error: t("error_innocuous") };
    innocuous = String(answer.value);
  }
  return { item: { question: q, truth: String(truth.value), innocuous } };
}

/** Clear every true number (and innocuous answer) from the page. */
function reset() {
  for (const q of byId.values()) {
    if (!isNumber(q)) continue;
    const input = inputOf(q);
    if (input) input.value = "";
    const other = innocuousOf(q);
    if (other) other.value = "";
  }
}

function maskText(mask, q) {
  if (!mask) return "";
  if (mask.normal) return `normal(${show(mask.normal.mean)}, ${show(mask.normal.sd)})`;
  if (mask.exponential) return `exponential(${show(mask.exponential.mean)})`;
  if (mask.uniform) return `${show(mask.uniform.min)} – ${show(mask.uniform.max, q)}`;
  if (mask.values) return mask.values.map((v) => show(v)).join(", ");
  return "";
}

/** The design in words, for the explanation under the question. */
function explain(q, t) {
  const d = q.design || {};
  const vars = { min: show(q.min), max: show(q.max, q) };
  switch (d.name) {
    case "mixture":
      return t("explain_number_mixture", { ...vars, truth: percent(d.p), mask: maskText(d.mask, q) });
    case "mixture-unknown":
      return t("explain_number_mixture-unknown", { truth1: percent(d.p[0]), truth2: percent(d.p[1]) });
    case "additive":
      return t("explain_number_additive", { scramble: maskText(d.scramble, q) });
    case "multiplicative":
      return t("explain_number_multiplicative", { scramble: maskText(d.scramble, q) })
        + (d.p > 0 ? ` ${t("explain_number_sometimes_truth", { truth: percent(d.p) })}` : "");
    case "laplace":
    case "duchi":
    case "piecewise":
      return t(`explain_number_${d.name}`, vars);
    default:
      return "";
  }
}

function stepText(step, t, counters) {
  counters[step.device] = (counters[step.device] || 0) + 1;
  const n = counters[step.device];
  if (step.device === "coin") return t("step_coin", { n, side: t(step.outcome === "heads" ? "coin_heads" : "coin_tails") });
  if (step.device === "die") return t("step_die", { n, faces: step.faces, face: step.outcome });
  if (step.device === "draw") return t("number_step_draw", { value: show(step.outcome) });
  return t("step_spinner", { n, value: step.outcome });
}

function actionText(step, t) {
  const action = step.action;
  if (action === "truth") return t("action_truth");
  if (action === "group-1" || action === "group-2") return t("action_group", { group: action.slice(6) });
  const key = `number_action_${action}`;
  const text = t(key);
  return text === key ? "" : text;
}

/**
 * The review's lines for one number question: each device step, then the arithmetic
 * ("your answer 1,200 + drawn 3,517 = 4,717 is sent"), and the report as shown.
 */
function transcript(q, result, item, t, rule = () => "") {
  const counters = {};
  const lines = [];
  for (const step of result.steps || []) {
    if (step.device === "draw" && ["add", "multiply", "noise"].includes(result.operation)) continue; // the sum says it
    const meaning = actionText(step, t);
    const why = step.device === "draw" ? "" : rule(step);
    lines.push({ step, text: `${stepText(step, t, counters)}${meaning ? ` → ${meaning}` : ""}${why ? ` ${why}` : ""}` });
  }
  const vars = { answer: show(item && item.truth, q), drawn: show(result.drawn), report: show(result.report, q),
    innocuous: show(item && item.innocuous, q) };
  const key = { truth: "number_sent_truth", mask: "number_sent_mask", add: "number_sent_add",
    multiply: "number_sent_multiply", noise: "number_sent_noise", duchi: "number_sent_duchi",
    piecewise: "number_sent_piecewise", innocuous: "number_sent_innocuous" }[result.operation];
  if (key) lines.push({ text: t(key, vars), arithmetic: true });
  return { lines, report: show(result.report, q) };
}

window.rrsiteNumbers = { isNumber, read, reset, explain, transcript, show };
