import { render } from "./lib.mjs";

const rows = await (await fetch("data.json")).json();
render(rows);
