// What the playground uses of CodeMirror 6, re-exported from one module so the console loads one file.
export { EditorView, keymap } from "@codemirror/view";
export { EditorState, Prec } from "@codemirror/state";
export { basicSetup } from "codemirror";
export { javascript, javascriptLanguage } from "@codemirror/lang-javascript";
export { autocompletion, completeFromList } from "@codemirror/autocomplete";
export { indentWithTab } from "@codemirror/commands";
