// rrsite respondent page: the designs and the devices' steps in words (the explanation under each
// sensitive question, and the transcript of what the coins, dice and spinners did).

import { fixed, mirroredText, optionLabel, percent, t } from "./shared.js";

/** Words for the designs of RRreg (docs/designs.md); the group is drawn on the device. */
function explainNewDesign(q, design, yesLabel, noLabel) {
  const grouped = Array.isArray(design.p) || Array.isArray(design.yes);
  const group = grouped ? `${t("explain_group", { chance: percent(design.probability ?? 0.5) })} ` : "";
  const range = (pair) => pair.map(percent).join(t("explain_or"));
  switch (design.name) {
    case "mangat":
      return t("explain_mangat", { p: percent(design.p), q: percent(1 - design.p), yes_label: yesLabel, no_label: noLabel });
    case "sld":
      return group + t("explain_sld", { p: range(design.p), yes_label: yesLabel, no_label: noLabel });
    case "cdm":
      return group + t("explain_cdm", { p: range(design.p), yes_label: yesLabel });
    case "cdm-sym":
      return group + t("explain_cdm-sym", { yes: range(design.yes), no: range(design.no), yes_label: yesLabel, no_label: noLabel });
    case "unrelated-unknown":
      return group + t("explain_unrelated-unknown", { p: range(design.p) });
    case "kuk":
      return t("explain_kuk", { cards: design.cards, red_yes: percent(design.red_yes), red_no: percent(design.red_no), yes_label: yesLabel });
    default:
      return "";
  }
}

export function explainDesign(q) {
  if (q.type === "number") return window.rrsiteNumbers ? window.rrsiteNumbers.explain(q, t) : "";
  if (window.rrsiteOracles && window.rrsiteOracles.isOracle(q)) return window.rrsiteOracles.explain(q, t);
  const design = q.design || {};
  const matrix = q.matrix;
  const values = q.values || [];
  const yesLabel = optionLabel(q, "yes");
  const noLabel = optionLabel(q, "no");
  const binary = q.type === "yes-no" && matrix && matrix.length === 2;
  const p00 = binary ? matrix[0][0] : null;
  const p11 = binary ? matrix[1][1] : null;
  switch (design.name) {
    case "forced-yes":
      return t("explain_forced-yes", { truth: percent(design.truth ?? p00), yes_label: yesLabel, no_label: noLabel });
    case "warner": {
      const p = design.p ?? p00;
      const mirrored = mirroredText(q);
      return t(mirrored ? "explain_warner-mirrored" : "explain_warner", { p: percent(p), q: percent(1 - p), mirrored });
    }
    case "unrelated": {
      const hasInnocuous = Boolean(document.querySelector(`[data-innocuous-for="${q.id}"]`));
      return t(hasInnocuous ? "explain_unrelated" : "explain_unrelated-drawn", {
        p: percent(design.p), q: percent(1 - design.p), rate: percent(design.innocuous_rate), yes_label: yesLabel,
      });
    }
    case "crosswise":
    case "triangular":
      return t(`explain_${design.name}`, { rate: percent(design.p) });
    case "extended-crosswise": { // the statement shown is the group's (crosswise.js): p or 1 - p
      const group = window.rrsiteCrosswise && window.rrsiteCrosswise.groups[q.id];
      return t("explain_crosswise", { rate: percent(group === 2 ? 1 - design.p : design.p) });
    }
    case "mangat":
    case "sld":
    case "cdm":
    case "cdm-sym":
    case "unrelated-unknown":
    case "kuk":
      return explainNewDesign(q, design, yesLabel, noLabel);
    case "k-rr":
      return t("explain_k-rr", { p: percent(matrix ? matrix[0][0] : design.p) });
    default:
      if (binary) {
        return t("explain_forced-response", {
          truth: percent(p00 + p11 - 1), yes: percent(1 - p00), no: percent(1 - p11), yes_label: yesLabel, no_label: noLabel,
        });
      }
      if (matrix) {
        const diagonal = values.map((_, i) => matrix[i][i]);
        if (Math.max(...diagonal) - Math.min(...diagonal) < 1e-9) return t("explain_matrix-same", { p: percent(diagonal[0]) });
        return t("explain_matrix", { min: percent(Math.min(...diagonal)), max: percent(Math.max(...diagonal)) });
      }
      return "";
  }
}

export function deviceIcon(step) {
  const icon = document.createElement("span");
  icon.className = `rr-device rr-${step.device}`;
  icon.setAttribute("aria-hidden", "true");
  if (step.device === "coin") {
    icon.classList.add(step.outcome === "heads" ? "rr-heads" : "rr-tails");
  } else if (step.device === "die") {
    icon.textContent = step.outcome;
  } else {
    icon.style.setProperty("--rr-turn", `${Number(step.outcome) || 0}turn`);
  }
  return icon;
}

/**
 * The rule that decided a step, so the respondent can check it: which faces of the die, or which
 * range of the random number, lead to the step's action (from the step's chances, in the order
 * rrsite/core draws them: the first action takes the lowest faces or numbers).
 */
export function stepRule(step) {
  const chances = step.chances || [];
  const index = chances.findIndex(([name]) => name === step.action);
  if (index < 0) return "";
  const chance = percent(chances[index][1]);
  if (step.device === "coin") {
    return t("rule_coin", { side: t(step.outcome === "heads" ? "coin_heads" : "coin_tails"), chance });
  }
  if (step.device === "die") {
    const counts = chances.map(([, p]) => Math.round(p * step.faces));
    const from = counts.slice(0, index).reduce((a, b) => a + b, 0) + 1;
    const to = from + counts[index] - 1;
    return from === to
      ? t("rule_die_one", { face: from, faces: step.faces, chance })
      : t("rule_die", { from, to, faces: step.faces, chance });
  }
  const lo = chances.slice(0, index).reduce((a, [, p]) => a + p, 0);
  const hi = lo + chances[index][1];
  return t("rule_spinner", { lo: fixed(lo, 4), hi: fixed(Math.min(hi, 1), 4), chance });
}

export function describeStep(q, step, counters, result, item) {
  counters[step.device] = (counters[step.device] || 0) + 1;
  const n = counters[step.device];
  const what = step.device === "coin" ? t("step_coin", { n, side: t(step.outcome === "heads" ? "coin_heads" : "coin_tails") })
    : step.device === "die" ? t("step_die", { n, faces: step.faces, face: step.outcome })
      : t("step_spinner", { n, value: fixed(Number(step.outcome), 4) });
  const action = step.action;
  let meaning;
  if (action === "truth") meaning = t("action_truth");
  else if (action === "forced") meaning = t("action_forced");
  else if (action === "yes" || action === "no") meaning = t("action_forced_value", { label: optionLabel(q, action) });
  else if (action === "statement") meaning = t("action_statement");
  else if (action === "mirrored") meaning = mirroredText(q) ? t("action_mirrored_statement", { mirrored: mirroredText(q) }) : t("action_mirrored");
  else if (action === "sensitive") meaning = t("action_sensitive");
  else if (action === "innocuous") meaning = t(item.innocuous !== undefined ? "action_innocuous" : "action_innocuous_drawn");
  else if (action === "red" || action === "black") meaning = t(`action_card_${action}`);
  else if (action === "group-1" || action === "group-2") meaning = t("action_group", { group: action.slice(6) });
  else if (action === "other") meaning = t("action_other");
  else if (/^other-\d+$/.test(action)) meaning = t("action_other_pick", { label: optionLabel(q, result.report) });
  else if (/^report-\d+$/.test(action)) meaning = t("action_report", { label: optionLabel(q, q.values[Number(action.slice(7)) - 1]) });
  else meaning = action;
  const rule = stepRule(step);
  return `${what} → ${meaning}${rule ? ` ${rule}` : ""}`;
}


/**
 * One short sentence for "What will be sent": what the device drew for a randomized answer and
 * what that means for the answer sent ("Your device drew “say Yes”: “Yes” is sent, whatever
 * your answer."). Read from the last step that decided (a two-group design's group draw aside).
 */
export function glanceSentence(q, result) {
  const steps = (result.steps || []).filter((step) => !/^group-/.test(step.action));
  const label = optionLabel(q, String(result.report));
  const last = steps.length ? steps[steps.length - 1].action : "truth";
  if (last === "red" || last === "black") {
    const red = steps.filter((step) => step.action === "red").length;
    return t("glance_cards", { cards: steps.length, red, label });
  }
  if (last === "truth") return t("glance_truth", { label });
  if (last === "yes" || last === "no") return t("glance_forced", { label });
  if (last === "statement") return t("glance_statement", { label });
  if (last === "mirrored") return t("glance_mirrored", { label });
  if (last === "sensitive") return t("glance_sensitive", { label });
  if (last === "innocuous") return t("glance_innocuous", { label });
  if (last === "other" || /^other-\d+$/.test(last)) return t("glance_other", { label });
  return t("glance_pick", { label });
}
