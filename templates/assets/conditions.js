// show_if: a question is shown only while an earlier *direct* question has one of the
// answers its condition lists. The build refuses conditions on randomized questions, so what is
// shown never depends on a true sensitive answer. page.js skips hidden questions (they are neither
// checked nor sent); this module only decides which ones are hidden.

const config = JSON.parse(document.getElementById("rr-config").textContent);
const form = document.getElementById("rr-form");
const conditional = (config.questions || []).filter((q) => q.show_if);

/** The direct answers of a question now on the form (none when it is itself hidden). */
function answersOf(id) {
  const box = document.getElementById(`q-${id}`);
  if (!box || box.hidden) return [];
  return Array.from(box.querySelectorAll("input[name]"))
    .filter((input) => input.name === id && input.checked)
    .map((input) => input.value);
}

/** Show and hide in question order, so that a condition on a hidden question hides too. */
export function update() {
  for (const q of conditional) {
    const box = document.getElementById(`q-${q.id}`);
    if (!box) continue;
    const shown = answersOf(q.show_if.question).some((value) => q.show_if.is.includes(value));
    if (box.hidden !== !shown) box.hidden = !shown;
    const practice = document.getElementById(`q-${q.id}-practice`);
    if (practice) practice.hidden = !shown;
  }
}

if (form && conditional.length) {
  form.addEventListener("change", update);
  form.addEventListener("input", update);
  // form.reset() (a new respondent) clears the answers after the event: look once it is done.
  form.addEventListener("reset", () => setTimeout(update, 0));
  document.addEventListener("rrsite:answers-restored", update);
  update();
}
