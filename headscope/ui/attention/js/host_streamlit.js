// The Streamlit host (Custom Components v2): Streamlit calls the module's default export with
// {data, parentElement, setStateValue, setTriggerValue}, which is what draw() takes. The data
// comes as one JSON string (component.py: Streamlit does not walk it for dataframes). Streamlit
// imports this module from its URL, and the browser these modules from theirs.

import { draw } from "./main.js";
export default function (component) {
  const { data } = component;
  draw(typeof data === "string" ? { ...component, data: JSON.parse(data) } : component);
}
