// Randomized number questions: the true number is read from an input without a name,
// checked against the question's range, handed to the randomizer (rrsite.core.numbers in the
// worker, coins from crypto.getRandomValues) and cleared. Only the report is sent or stored.
// page.js calls the hooks below (window.rrsiteNumbers); this file is loaded before it.

import { fixed, formatNumber, readNumber } from "./shared.js";

const config = JSON.parse(document.getElementById("rr-config").textContent);
const byId = new Map((config.questions || []).map((q) => [q.id, q]));

/** A number as the page's language writes it, every digit it has (exactly what is sent). */
function show(value, q) {
  if (value === null || value === undefined || value === "") return "";
  const number = Number(value);
  if (!Number.isFinite(number)) return String(value);
  const text = formatNumber(number);
  return q && q.unit ? `${text} ${q.unit}` : text;
}

/**
 * A number the device made (a report, a draw), as the review shows it: to the design's display
 * step (config's display_step: the report grid, or a thousandth of the range for duchi and
 * piecewise, whose reports are not short decimals), "≈ " before it when that rounded it. The
 * exact number is in the data sent, shown under "The data, exactly as it will be sent".
 */
function sent(value, q) {
  if (value === null || value === undefined || value === "") return "";
  const number = Number(value);
  const step = q && Number(q.display_step);
  if (!Number.isFinite(number) || !step || step <= 0) return show(value, q);
  const decimals = Math.max(0, Math.ceil(-Math.log10(step) - 1e-9));
  const rounded = Number((Math.round(number / step) * step).toFixed(decimals));
  const near = Math.abs(rounded - number) <= 1e-9 * Math.max(1, Math.abs(number));
  const text = new Intl.NumberFormat(document.documentElement.lang || "en", { maximumFractionDigits: decimals })
    .format(near ? number : rounded);
  return `${near ? "" : "≈ "}${text}${q.unit ? ` ${q.unit}` : ""}`;
}

/** A rounded figure for the explanations (a spread, a ratio): at most `digits` decimals. */
function approx(value, digits = 1) {
  return new Intl.NumberFormat(document.documentElement.lang || "en", { maximumFractionDigits: digits }).format(value);
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
  const read = readNumber(input.value);
  if (read.error === "ambiguous") {
    return { error: t("number_error_ambiguous", { typed: input.value.trim(), first: show(read.readings[0]), second: show(read.readings[1]) }) };
  }
  if (read.error) return { error: t("error_number") };
  if (read.value === undefined) return {};
  const value = read.value;
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
  return { value };
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

/** A mask or scramble in words; `unit` is the question's, or "" for a factor. */
function maskText(mask, t, unit) {
  const q = unit ? { unit } : null;
  if (!mask) return "";
  if (mask.normal) return t("number_mask_normal", { mean: show(mask.normal.mean), spread: show(2 * mask.normal.sd, q) });
  if (mask.exponential) return t("number_mask_exponential", { mean: show(mask.exponential.mean, q) });
  if (mask.uniform) return `${show(mask.uniform.min)} – ${show(mask.uniform.max, q)}`;
  if (mask.values) return mask.values.map((v) => show(v)).join(", ") + (unit ? ` ${unit}` : "");
  return "";
}

/** The design in words, for the explanation under the question. */
function explain(q, t) {
  const d = q.design || {};
  const vars = { min: show(q.min), max: show(q.max, q) };
  switch (d.name) {
    case "mixture":
      return t("explain_number_mixture", { ...vars, truth: percent(d.p), mask: maskText(d.mask, t, q.unit) });
    case "mixture-unknown":
      return t("explain_number_mixture-unknown", { truth1: percent(d.p[0]), truth2: percent(d.p[1]) });
    case "additive":
      return t("explain_number_additive", { scramble: maskText(d.scramble, t, q.unit) });
    case "multiplicative":
      return t("explain_number_multiplicative", { scramble: maskText(d.scramble, t, "") })
        + (d.p > 0 ? ` ${t("explain_number_sometimes_truth", { truth: percent(d.p) })}` : "");
    case "laplace":
    case "duchi":
    case "piecewise":
      return t(`explain_number_${d.name}`, vars);
    default:
      return "";
  }
}

/**
 * How well the design hides the answer, for a lay respondent: the epsilon as a ratio of
 * chances, or "no epsilon" and why in plain words (the manifest's epsilon and design).
 */
function privacy(q, t) {
  if (q.epsilon !== null && q.epsilon !== undefined) {
    return t("number_privacy_epsilon", { ratio: approx(Math.exp(q.epsilon)), epsilon: approx(q.epsilon, 2) });
  }
  const d = q.design || {};
  const reasons = [t("number_privacy_none")];
  const truth = d.name === "mixture-unknown" ? Math.max(...d.p) : d.name === "additive" ? 0 : d.p || 0;
  if (truth > 0) reasons.push(t("number_privacy_reason_truth", { truth: percent(truth) }));
  if (d.name === "additive") reasons.push(t("number_privacy_reason_add"));
  if (d.name === "multiplicative") {
    reasons.push(t("number_privacy_reason_multiply"));
    const low = q.min ?? -Infinity;
    const high = q.max ?? Infinity;
    if (low <= 0 && 0 <= high) reasons.push(t("number_privacy_reason_zero"));
  }
  return reasons.join(" ");
}

function stepText(step, t, counters) {
  counters[step.device] = (counters[step.device] || 0) + 1;
  const n = counters[step.device];
  if (step.device === "coin") return t("step_coin", { n, side: t(step.outcome === "heads" ? "coin_heads" : "coin_tails") });
  if (step.device === "die") return t("step_die", { n, faces: step.faces, face: step.outcome });
  if (step.device === "draw") return t("number_step_draw", { value: show(step.outcome) });
  return t("step_spinner", { n, value: fixed(Number(step.outcome), 4) });
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
  // An answer off the design's grid is rounded first (rrsite/core: unbiased); the arithmetic
  // then starts from the rounded answer, so every figure shown is the one used and sent.
  const rounded = result.rounded !== undefined && result.rounded !== null;
  if (rounded) lines.push({ text: t("number_rounded", { answer: show(item && item.truth, q), rounded: show(result.rounded, q) }), rounding: true });
  // The report to its design's display step (duchi's and piecewise's are not short decimals);
  // the other figures exactly, so that the arithmetic shown holds.
  const vars = { answer: show(rounded ? result.rounded : item && item.truth, q), drawn: show(result.drawn),
    report: sent(result.report, q), product: show(result.product, q), innocuous: show(item && item.innocuous, q) };
  const product = result.product !== undefined && result.product !== null;
  const key = { truth: "number_sent_truth", mask: "number_sent_mask", add: "number_sent_add",
    multiply: product ? "number_sent_multiply_rounded" : "number_sent_multiply", noise: "number_sent_noise",
    duchi: "number_sent_duchi", piecewise: "number_sent_piecewise", innocuous: "number_sent_innocuous" }[result.operation];
  if (key) lines.push({ text: t(key, vars), arithmetic: true });
  return { lines, report: sent(result.report, q) };
}

/** The sentence for "What will be sent": what the device did, and the number sent. */
function glance(q, result, item, t) {
  const last = (result.steps || []).filter((step) => !/^group-/.test(step.action)).pop();
  const action = last ? last.action : "";
  const key = {
    truth: "glance_number_truth",
    mask: "glance_number_mask",
    add: "glance_number_add",
    multiply: "glance_number_multiply",
    noise: "glance_number_noise",
    innocuous: "glance_number_innocuous",
    duchi: action === "low" ? "glance_number_low" : "glance_number_high",
    piecewise: action === "tails" ? "glance_number_tails" : "glance_number_centre",
  }[result.operation] || "glance_number_mask";
  return t(key, { report: sent(result.report, q) });
}

/** The catalog key of the line on what is sent: duchi never sends the number, the designs
 * that change it (add, multiply, noise, piecewise) never send it as typed, the others may. */
function privateKey(q) {
  const d = q.design || {};
  if (d.name === "duchi") return "number_private_duchi";
  if (["additive", "laplace", "piecewise"].includes(d.name) || (d.name === "multiplicative" && !(d.p > 0))) {
    return "number_private_changed";
  }
  return "number_private";
}

/** Under the input: the range in the page's language, and how well the design hides the answer. */
function describe(q, t) {
  const range = document.getElementById(`q-${q.id}-range`);
  if (range && q.min !== null && q.min !== undefined && q.max !== null && q.max !== undefined) {
    range.textContent = t("number_range", { min: show(q.min), max: show(q.max, q) });
  }
  const note = document.getElementById(`q-${q.id}-privacy`);
  if (note) note.textContent = privacy(q, t);
}

window.rrsiteNumbers = { isNumber, read, reset, explain, describe, transcript, show, sent, glance, privateKey };
