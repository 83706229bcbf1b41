// The board of the pages (review and play): tiles, pieces and move marks, drawn from plain JSON.
// Every string from the record reaches the page as text (textContent, createTextNode), never as markup.
function h(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return e;
}
const SVG = "http://www.w3.org/2000/svg";
function s(tag, attrs, text) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

function buildBoard(D) {
  const b = el("board");
  b.replaceChildren();
  b.style.gridTemplateColumns = `repeat(${D.columns}, auto)`;
  b.style.justifyContent = "start";
  const tiles = {};
  for (const t of D.board) tiles[t.row + "," + t.col] = t;
  for (let r = 0; r < 3; r++) for (let c = 0; c < D.columns; c++) {
    const t = tiles[r + "," + c], div = h("div", {class: t ? "tile" + (t.rosette ? " rosette" : "") : "tile gap"});
    if (t) { div.dataset.tile = t.tile; div.append(h("span", {class: "tilename"}, t.tile)); }
    b.appendChild(div);
  }
}

const cap = side => side[0].toUpperCase() + side.slice(1);
function markTiles(notation, from, to) {
  const tiles = (notation || "").match(/^([a-z][0-9]+)([a-z][0-9]+)/);
  if (tiles) for (const [t, cls] of [[tiles[1], from], [tiles[2], to]]) {
    const div = document.querySelector(`#board .tile[data-tile="${t.toUpperCase()}"]`); if (div) div.classList.add(cls);
  }
}

// Put each side's pieces of position p ({light: [tiles], dark: [tiles]}) on the board; clear the marks.
function drawPieces(p) {
  document.querySelectorAll("#board .tile[data-tile]").forEach(div => {
    div.classList.remove("from", "to", "best-from", "best-to", "movable");
    const piece = div.querySelector(".piece"); if (piece) piece.remove();
    const side = p.light.includes(div.dataset.tile) ? "light" : p.dark.includes(div.dataset.tile) ? "dark" : null;
    if (side) { const d = document.createElement("div"); d.className = "piece " + side; div.appendChild(d); }
  });
}

// The way along a path: on each tile an arrow towards the next one ("in" on the first, "out" after the last).
const ROWS = "ABC";
function stepGlyph(a, b) {
  const dr = ROWS.indexOf(b[0]) - ROWS.indexOf(a[0]), dc = +b.slice(1) - +a.slice(1);
  return dr > 0 ? "\u2193" : dr < 0 ? "\u2191" : dc > 0 ? "\u2192" : "\u2190";
}
function drawArrows(path, side) {
  document.querySelectorAll("#board .arrow").forEach(a => a.remove());
  path.forEach((tile, i) => {
    const div = document.querySelector(`#board .tile[data-tile="${tile}"]`);
    if (!div) return;
    const next = i + 1 < path.length ? stepGlyph(tile, path[i + 1]) : stepGlyph(path[i - 1] || tile, tile) + "out";
    const text = (i === 0 ? "in" : "") + next;
    const old = div.querySelector(".arrow");
    if (old) old.textContent += " " + text;  // a path that visits the tile twice
    else div.append(h("span", {class: "arrow " + side, title: `${side}'s path`}, text));
  });
}

// Pieces at home and scored, beside the board: one tray per side (home pieces can be made clickable).
function drawTrays(p, pieces, label) {
  for (const side of ["light", "dark"]) {
    const home = el(side + "-home"), scored = el(side + "-scored");
    home.replaceChildren(...Array.from({length: p.home[side]}, () => h("div", {class: "piece " + side})));
    scored.replaceChildren(...Array.from({length: p.scored[side]}, () => h("div", {class: "piece " + side})));
    el(side + "-label").textContent = `${label(side)}: home ${p.home[side]}`;
    el(side + "-count").textContent = `scored ${p.scored[side]} of ${pieces}`;
  }
}

// The roll as dice: n tetrahedra seen from above, those showing a marked tip drawn with a white tip. Which dice
// show it varies with the roll's step, so consecutive rolls look like throws.
function drawDice(svg, count, roll, step) {
  svg.replaceChildren();
  if (roll === null || roll === undefined) return;
  if (!count) { svg.append(s("text", {x: 4, y: 28, class: "dicevalue"}, `roll ${roll}`)); return; }
  const marked = count === 3 && roll === 4 ? 0 : roll;  // three dice: no marked tip up counts as 4
  const order = Array.from({length: count}, (_, i) => i).sort((a, b) => ((a * 7 + step * 5) % 11) - ((b * 7 + step * 5) % 11));
  const up = new Set(order.slice(0, marked));
  for (let i = 0; i < count; i++) {
    const x = 4 + i * 40;
    svg.append(s("polygon", {points: `${x},36 ${x + 17},4 ${x + 34},36`, class: "die", fill: "#e8d7b0",
                             stroke: "#3b2f2f", "stroke-width": 1.5}));
    svg.append(s("line", {x1: x + 17, y1: 4, x2: x + 17, y2: 26, stroke: "#3b2f2f", "stroke-width": 1}));
    svg.append(s("circle", {cx: x + 17, cy: 24, r: 5, class: up.has(i) ? "tip marked" : "tip",
                            fill: up.has(i) ? "#fff" : "#3b2f2f", stroke: "#3b2f2f"}));
  }
  svg.append(s("text", {x: 8 + count * 40, y: 28, class: "dicevalue"}, `= ${roll}`));
  svg.dataset.roll = roll;
  svg.dataset.marked = marked;
}
