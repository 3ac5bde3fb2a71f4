// rrsite respondent page: the extended crosswise model (`randomize: extended-crosswise`).
//
// For each such question the page draws the respondent's group once, here, from
// crypto.getRandomValues (53 random bits against the design's probability of group 1), shows
// that group's innocuous statement (group 1: the one true for p of people; group 2: its
// complement) and hands the group to page.js, which sends it as the body's `groups` (the
// collector's `<id>.group`, as for every two-group design). The group says which statement was
// shown, nothing about the respondent; the respondent still combines the two statements in
// their head, and the sensitive answer never enters the device.

const config = JSON.parse(document.getElementById("rr-config").textContent);

/** A uniform number in [0, 1) from 53 random bits. */
function uniform() {
  const words = new Uint32Array(2);
  crypto.getRandomValues(words);
  return (words[0] * 2 ** 21 + (words[1] >>> 11)) / 2 ** 53;
}

const groups = {};
for (const q of config.questions || []) {
  if (!q.sensitive || !q.design || q.design.name !== "extended-crosswise") continue;
  const group = uniform() < (q.design.probability ?? 0.5) ? 1 : 2;
  groups[q.id] = group;
  for (const statement of document.querySelectorAll(`[data-statement-for="${q.id}"]`)) {
    statement.hidden = Number(statement.dataset.statementGroup) !== group;
  }
  const box = document.getElementById(`q-${q.id}`);
  if (box) box.dataset.crosswiseGroup = String(group);
}

// read by page.js when it assembles the body (only for questions that were answered)
window.rrsiteCrosswise = { groups };
