async () => {
async function doStuff() { return 42; }
return doStuff();
}