async () => {
if (true) { doStuff(); }
}