// rrsite respondent page: the form. Radio groups of unnamed inputs, reading and checking the
// answers, the error list, and clearing the form. The true answers of sensitive questions are
// read here for the worker and never kept.

import {
  $, form, formatNumber, optionInputs, questionElement, questionText, questions, isCombined, readNumber, state, t,
} from "./shared.js";


/** Unnamed radios are not grouped by the browser: give them the behaviour of one radio group. */
export function setUpRadioGroup(container) {
  const radios = Array.from(container.querySelectorAll("input[type=radio]"));
  const sync = () => {
    const checked = radios.find((r) => r.checked);
    radios.forEach((r, i) => { r.tabIndex = (checked ? r === checked : i === 0) ? 0 : -1; });
  };
  const select = (radio) => {
    radio.checked = true;
    radios.forEach((r) => { if (r !== radio) r.checked = false; });
    sync();
    radio.focus();
  };
  radios.forEach((radio, index) => {
    radio.addEventListener("change", () => { if (radio.checked) select(radio); });
    radio.addEventListener("keydown", (event) => {
      const step = { ArrowDown: 1, ArrowRight: 1, ArrowUp: -1, ArrowLeft: -1 }[event.key];
      if (!step) return;
      event.preventDefault();
      select(radios[(index + step + radios.length) % radios.length]);
    });
  });
  sync();
  container._rrReset = () => { radios.forEach((r) => { r.checked = false; }); sync(); };
}

export function clearErrors() {
  $("rr-errors").hidden = true;
  $("rr-errors-list").replaceChildren();
  for (const element of form.querySelectorAll(".rr-field-error")) {
    element.hidden = true;
    element.textContent = "";
  }
  for (const element of form.querySelectorAll("[aria-invalid]")) element.removeAttribute("aria-invalid");
}

/** Remove one question's error (its message, outline and summary line) once it is changed. */
export function clearQuestionError(q) {
  const field = $(`q-${q.id}-error`);
  if (!field || field.hidden) return;
  field.hidden = true;
  field.textContent = "";
  for (const element of questionElement(q).querySelectorAll("[aria-invalid]")) element.removeAttribute("aria-invalid");
  const list = $("rr-errors-list");
  for (const item of Array.from(list.children)) if (item.dataset.question === q.id) item.remove();
  if (!list.children.length) $("rr-errors").hidden = true;
}

export function showErrors(errors) {
  const list = $("rr-errors-list");
  for (const { q, message } of errors) {
    const field = $(`q-${q.id}-error`);
    field.textContent = message;
    field.hidden = false;
    // (a comprehension check is a question of its own inside its question's box: skip its inputs)
    const input = questionElement(q).querySelector("input:not(.rr-check input), textarea");
    if (input) input.setAttribute("aria-invalid", "true");
    const item = document.createElement("li");
    item.dataset.question = q.id;
    const link = document.createElement("a");
    link.href = `#q-${q.id}`;
    link.textContent = `${questionText(q)}: ${message}`;
    link.addEventListener("click", (event) => {
      event.preventDefault();
      const first = questionElement(q).querySelector("input:not([tabindex='-1']):not(.rr-check input), textarea");
      if (first) first.focus();
    });
    item.append(link);
    list.append(item);
  }
  $("rr-errors-title").textContent = t("errors_title");
  $("rr-errors").hidden = false;
  $("rr-errors").focus();
}

/** Read and check the form: {errors, items (for the worker), direct (answers sent as given)}.
 * While editing a stored report (`editing`), the sensitive questions are fixed and skipped. */
export function readForm() {
  const errors = [];
  const items = [];
  const direct = {};
  for (const q of questions) {
    // fielding hook: a question hidden by its show_if (conditions.js) is neither checked nor sent.
    if (questionElement(q).hidden) continue;
    const error = (message) => errors.push({ q, message });
    if (q.sensitive && state.editing) continue;
    if (isCombined(q)) {
      const report = optionInputs(q, "input[data-report]").find((i) => i.checked);
      if (report) direct[q.id] = report.value;
      else if (q.required) error(t("error_required"));
      continue;
    }
    if (q.sensitive && q.type === "number" && window.rrsiteNumbers) { // numbers.js
      const read = window.rrsiteNumbers.read(q, t);
      if (read.error) error(read.error);
      else if (read.item) items.push(read.item);
      continue;
    }
    if (q.sensitive && window.rrsiteOracles && window.rrsiteOracles.isOracle(q)) { // oracles.js
      const read = window.rrsiteOracles.read(q, t);
      if (read.error) error(read.error);
      else if (read.item) items.push(read.item);
      continue;
    }
    if (q.sensitive) {
      const truth = optionInputs(q, "input[data-truth]").find((i) => i.checked);
      const innocuousBox = document.querySelector(`[data-innocuous-for="${q.id}"]`);
      const innocuous = innocuousBox ? Array.from(innocuousBox.querySelectorAll("input[data-innocuous]")).find((i) => i.checked) : null;
      if (!truth) error(t("error_required"));
      else if (innocuousBox && !innocuous) error(t("error_innocuous"));
      else items.push({ question: q, truth: truth.value, innocuous: innocuous ? innocuous.value : undefined });
      continue;
    }
    let value;
    if (q.type === "yes-no" || q.type === "choice") {
      const checked = optionInputs(q, `input[name]`).find((i) => i.checked);
      value = checked ? checked.value : undefined;
    } else if (q.type === "multi-choice") {
      const checked = optionInputs(q, "input[name]").filter((i) => i.checked).map((i) => i.value);
      value = checked.length ? checked : undefined;
    } else if (q.type === "number") {
      const input = $(`q-${q.id}-input`);
      const read = readNumber(input.value); // as the page's language writes numbers (shared.js)
      if (read.error === "ambiguous") {
        error(t("number_error_ambiguous", { typed: input.value.trim(), first: formatNumber(read.readings[0]), second: formatNumber(read.readings[1]) }));
        continue;
      }
      if (read.error) { error(t("error_number")); continue; }
      if (read.value !== undefined) {
        const number = read.value;
        if (q.integer && !Number.isInteger(number)) { error(t("error_integer")); continue; }
        if (q.min !== undefined && q.min !== null && number < q.min) { error(t("error_min", { min: formatNumber(q.min) })); continue; }
        if (q.max !== undefined && q.max !== null && number > q.max) { error(t("error_max", { max: formatNumber(q.max) })); continue; }
        value = number;
      }
    } else if (q.type === "text") {
      const text = $(`q-${q.id}-input`).value.trim();
      const max = q.max_length || 500;
      if (text.length > max) { error(t("error_length", { max, length: text.length })); continue; }
      value = text === "" ? undefined : text;
    }
    if (value === undefined) {
      if (q.required) error(t("error_required"));
    } else {
      direct[q.id] = value;
    }
  }
  return { errors, items, direct };
}

export function resetForm() {
  form.reset();
  for (const group of form.querySelectorAll("[data-group]")) if (group._rrReset) group._rrReset();
  clearErrors();
}

/** Clear the true answers of the sensitive questions from the page. */
export function resetTruths() {
  for (const group of form.querySelectorAll("[data-group]")) if (group._rrReset) group._rrReset();
  if (window.rrsiteNumbers) window.rrsiteNumbers.reset(); // the true numbers
  if (window.rrsiteOracles) window.rrsiteOracles.reset(); // the true ticks of multi-choice
}

/** Put a direct answer back into its inputs. */
export function setDirectAnswer(q, value) {
  if (q.type === "number") { // written as the page's language reads it back (1234,5 in German)
    $(`q-${q.id}-input`).value = value === undefined ? "" : formatNumber(Number(value), { grouping: false });
    return;
  }
  if (q.type === "text") {
    $(`q-${q.id}-input`).value = value === undefined ? "" : String(value);
    return;
  }
  const values = Array.isArray(value) ? value.map(String) : value === undefined ? [] : [String(value)];
  for (const input of optionInputs(q, "input[name]")) input.checked = values.includes(input.value);
}
