// Question order: with `shuffle: true` the questions of each page are shown in an order
// drawn on this device (crypto.getRandomValues, Fisher-Yates). The order is not sent or stored;
// answers are read and sent by question id, whatever the order.

const form = document.getElementById("rr-form");

/** A uniform integer in [0, n), without modulo bias. */
function below(n) {
  const limit = Math.floor(0x100000000 / n) * n;
  const word = new Uint32Array(1);
  do crypto.getRandomValues(word); while (word[0] >= limit);
  return word[0] % n;
}

/** A question and what belongs just above it (its prose, its practice round). */
function unitOf(fieldset) {
  const unit = [fieldset];
  let previous = fieldset.previousElementSibling;
  while (previous && (previous.matches(".rr-between") || previous.matches(".rr-practice"))) {
    unit.unshift(previous);
    previous = previous.previousElementSibling;
  }
  return unit;
}

export function shuffle() {
  const groups = new Map();
  for (const fieldset of form.querySelectorAll(":scope > fieldset.rr-question")) {
    const key = fieldset.dataset.page || "all";
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(unitOf(fieldset));
  }
  for (const units of groups.values()) {
    if (units.length < 2) continue;
    const anchor = units[units.length - 1].at(-1).nextSibling;
    const parent = units[0][0].parentNode;
    for (let i = units.length - 1; i > 0; i -= 1) {
      const j = below(i + 1);
      [units[i], units[j]] = [units[j], units[i]];
    }
    for (const unit of units) for (const element of unit) parent.insertBefore(element, anchor);
  }
}

if (form) shuffle();
