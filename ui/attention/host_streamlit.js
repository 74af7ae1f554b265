// The Streamlit host (Custom Components v2): Streamlit calls the module's default export with
// {data, parentElement, setStateValue, setTriggerValue}, which is what draw() takes.
export default function (component) {
  draw(component);
}
