export function render(rows) {
  const list = document.getElementById("rows");
  for (const row of rows) {
    const item = document.createElement("li");
    item.textContent = `${row.name}: ${row.value}`;
    list.append(item);
  }
}
