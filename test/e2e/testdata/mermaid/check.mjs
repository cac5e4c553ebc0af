// Reads a Mermaid flowchart on stdin with Mermaid's own parser, headless
// under jsdom, and prints what it would draw as JSON: the diagram type, nodes
// (id, label with entity codes decoded and <br/> as a line break, classes)
// and edges (from, to, label, stroke: normal or dotted). A text Mermaid
// refuses exits 1 with its parse error on stderr. Used by test/e2e
// (relations_graph_test.go); install with npm ci in this directory.
import { JSDOM } from 'jsdom';
import { readFileSync } from 'node:fs';
const dom = new JSDOM('<!DOCTYPE html><body></body>');
globalThis.window = dom.window;
globalThis.document = dom.window.document;
const { default: mermaid } = await import('mermaid');
mermaid.initialize({ startOnLoad: false });
const text = readFileSync(0, 'utf8');
// Mermaid's parser keeps entity codes (#name;, #123;) as placeholders, which
// its decodeEntities turns into HTML entities before rendering; the browser
// then decodes them.
const decode = (s) => {
  const html = s.replace(/ﬂ°°/g, '&#').replace(/ﬂ°/g, '&').replace(/¶ß/g, ';');
  const el = dom.window.document.createElement('textarea');
  el.innerHTML = html.replace(/<br\s*\/?>/g, '\n');
  return el.value;
};
// One diagram as text, or a JSON array of diagram texts (one node start for
// many diagrams), answered with one result or an array of results.
const read = async (text) => {
  const diagram = await mermaid.mermaidAPI.getDiagramFromText(text);
  const db = diagram.db;
  const nodes = [...db.getVertices().values()].map((v) => ({ id: v.id, label: decode(v.text), classes: v.classes }));
  const edges = db.getEdges().map((e) => ({ from: e.start, to: e.end, label: decode(e.text), stroke: e.stroke }));
  return { type: diagram.type, nodes, edges };
};
try {
  if (text.startsWith('[')) {
    const out = [];
    for (const t of JSON.parse(text)) out.push(await read(t));
    console.log(JSON.stringify(out));
  } else {
    console.log(JSON.stringify(await read(text)));
  }
} catch (e) {
  console.error('mermaid: ' + (e.message || e));
  process.exit(1);
}
