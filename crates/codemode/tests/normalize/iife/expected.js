async () => {
return ((async () => { return 42; })())
}