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
