async () => {
function main() { return 1; }
return main();
}