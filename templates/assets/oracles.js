// Frequency oracles and "tick all that apply" on the respondent's page (rrsite.core.frequency).
//
// A randomized multi-choice question's true ticks are read from checkboxes without a name, handed
// to the randomizer as the JSON list of the ticked values and cleared; a choice question with a
// frequency oracle is read like any randomized choice. Only the report comes back and is sent:
// the boxes reported ticked, a hash rule and a group, a list of answers or a column number. This
// file words each design and its draws for the respondent; page.js, form.js, explain.js and
// review.js call its hooks (window.rrsiteOracles). Loaded before page.js.

const config = JSON.parse(document.getElementById("rr-config").textContent);
const lang = document.documentElement.lang || "en";
const ORACLES = new Set(["oue", "sue", "olh", "subset", "hadamard"]);

const percent = (p) => new Intl.NumberFormat(lang, { style: "percent", maximumFractionDigits: 1 }).format(p);
const whole = (n) => new Intl.NumberFormat(lang).format(n);

/** A frequency oracle's question, or a randomized multi-choice one. */
function isOracle(q) {
  return Boolean(q && q.sensitive && q.design && ORACLES.has(q.design.name));
}

/** A question kept as a permanent report across the waves of a panel. */
function isPanel(q) {
  return Boolean(q && q.sensitive && q.memoize);
}

function handles(q) {
  return isOracle(q) || isPanel(q);
}

function inputs(q) {
  const element = document.getElementById(`q-${q.id}`);
  return element ? Array.from(element.querySelectorAll("input[data-truth]")) : [];
}

function label(q, value) {
  for (const input of inputs(q)) {
    if (input.value === value && input.labels && input.labels[0]) return input.labels[0].textContent.trim();
  }
  const option = (q.options || []).find((o) => o.value === value);
  return option ? option.label : String(value);
}

/** form.js's hook: {error} or {item} (for the worker) or {} (unanswered, not required). */
function read(q, t) {
  const checked = inputs(q).filter((i) => i.checked).map((i) => i.value);
  if (q.type === "multi-choice") {
    const most = q.design.max_ticks;
    if (most && checked.length > most) return { error: t("oracle_error_max_ticks", { max: most }) };
    if (!checked.length && q.required) return { error: t("error_required") };
    // an empty set is an answer too ("none of these"): it is randomized like any other
    return { item: { question: q, truth: JSON.stringify(checked) } };
  }
  if (!checked.length) return q.required ? { error: t("error_required") } : {};
  return { item: { question: q, truth: checked[0] } };
}

function reset() {
  for (const q of config.questions || []) {
    if (isOracle(q)) for (const input of inputs(q)) input.checked = false;
  }
}

/** The design in words: what is sent for a ticked box, or for an answer. */
function explain(q, t) {
  const d = q.design || {};
  const o = q.oracle || {};
  const vars = { p: percent(o.p), q: percent(o.q), d: d.d, g: d.g, k: d.k };
  let text;
  if (q.type === "multi-choice") text = t("explain_multi", vars);
  else if (d.name === "olh") text = t("explain_olh", vars);
  else if (d.name === "hadamard") text = t("explain_hadamard", { p: percent(o.p), last: whole(2 ** Math.ceil(Math.log2(d.k + 1)) - 1) });
  else text = t(`explain_${d.name}`, vars);
  if (q.type === "multi-choice" && d.max_ticks) text += ` ${t("oracle_max_ticks", { max: d.max_ticks })}`;
  if (q.chosen_for && q.chosen_for.design) text += ` ${t("oracle_chosen", { design: d.name })}`;
  return text;
}

/** The respondent's ticks, as the review shows them on this device. */
function chosen(q, item) {
  if (q.type !== "multi-choice") return label(q, item.truth);
  const ticked = JSON.parse(item.truth);
  return ticked.length ? ticked.map((v) => label(q, v)).join(", ") : t_("oracle_none");
}

let messages = null;
function t_(key, vars = {}) {
  messages ??= JSON.parse(document.getElementById("rr-messages").textContent);
  const template = Object.prototype.hasOwnProperty.call(messages, key) ? messages[key] : key;
  return template.replace(/\{(\w+)\}/g, (whole_, name) => (name in vars ? String(vars[name]) : whole_));
}

/** A report as the review lists it. */
function answer(q, value) {
  if (Array.isArray(value)) return value.length ? value.map((v) => label(q, v)).join(", ") : t_("oracle_none");
  const d = q.design || {};
  if (d.name === "olh") {
    const [seed, group] = String(value).split(":");
    return t_("oracle_sent_hash", { seed, group: Number(group) + 1, g: d.g });
  }
  if (d.name === "hadamard") return t_("oracle_sent_column", { column: value });
  return label(q, value);
}

/** The review's lines for one question: the draws in words, and what is sent. */
function transcript(q, result, item, t) {
  const lines = [];
  if (isPanel(q)) lines.push({ text: t(result.drawn_now ? "waves_drawn_now" : "waves_kept_earlier") });
  const steps = result.steps || [];
  const name = (q.design || {}).name;
  if (q.type === "multi-choice" || name === "oue" || name === "sue") {
    const sent = Array.isArray(result.report) ? result.report.length : 0;
    lines.push({ text: t(isPanel(q) ? "oracle_steps_boxes_panel" : "oracle_steps_boxes", { count: steps.length, ticked: sent }) });
  } else {
    for (const step of steps) lines.push({ step, text: stepText(q, step, t) });
  }
  return { lines, report: answer(q, result.report) };
}

function stepText(q, step, t) {
  const action = step.action || "";
  if (action.startsWith("hash-")) return t("oracle_step_hash", { seed: action.slice(5), seeds: whole(step.faces) });
  if (action === "truth") return t("oracle_step_truth");
  if (action === "keep") return t("oracle_step_keep");
  if (action === "other" || /^other-\d+$/.test(action)) return t("oracle_step_other");
  if (action === "inside") return t("oracle_step_inside");
  if (action === "outside") return t("oracle_step_outside");
  if (action === "pick") {
    const picked = step.outcome ? step.outcome.split(",").map((i) => label(q, (q.values || [])[Number(i)])) : [];
    return t("oracle_step_pick", { labels: picked.join(", ") || t("oracle_none") });
  }
  if (action.startsWith("column-")) return t("oracle_step_column", { column: action.slice(7) });
  return action;
}

window.rrsiteOracles = { isOracle, isPanel, handles, read, reset, explain, chosen, answer, transcript };
