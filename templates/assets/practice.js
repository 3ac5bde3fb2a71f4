// Practice rounds: before a randomized question marked `practice: true`, the
// respondent answers a neutral question ("Is it daytime now?") and watches the question's own
// device (the same randomizer, the same design) decide what would be sent. As often as they
// like. Nothing of it is stored or sent: the result is only shown here, and cleared with the form.

const config = JSON.parse(document.getElementById("rr-config").textContent);
const byId = new Map((config.questions || []).map((q) => [q.id, q]));

function clear(box) {
  box.querySelector(".rr-practice-steps").replaceChildren();
  box.querySelector(".rr-practice-result").textContent = "";
}

async function practise(box, q, truth) {
  const hook = window.rrsitePractice;
  const steps = box.querySelector(".rr-practice-steps");
  const result = box.querySelector(".rr-practice-result");
  const buttons = box.querySelectorAll("[data-practice-truth]");
  for (const button of buttons) button.disabled = true;
  clear(box);
  try {
    const run = await hook.respond({ question: q, truth });
    for (const text of run.steps) {
      const item = document.createElement("li");
      item.textContent = text;
      steps.append(item);
    }
    result.textContent = result.dataset.template
      .replace("{truth}", hook.label(q, truth))
      .replace("{label}", hook.label(q, run.result.report));
    box.dataset.practised = String(Number(box.dataset.practised || 0) + 1);
  } catch (error) {
    result.textContent = error.message;
  } finally {
    for (const button of buttons) button.disabled = false;
  }
}

for (const box of document.querySelectorAll("[data-practice-for]")) {
  const q = byId.get(box.dataset.practiceFor);
  if (!q) continue;
  for (const button of box.querySelectorAll("[data-practice-truth]")) {
    button.addEventListener("click", () => practise(box, q, button.dataset.practiceTruth));
  }
}

// A new respondent (or a reset form) does not see the last one's practice.
const form = document.getElementById("rr-form");
if (form) form.addEventListener("reset", () => document.querySelectorAll("[data-practice-for]").forEach(clear));
document.addEventListener("rrsite:reset", () => document.querySelectorAll("[data-practice-for]").forEach(clear));
