async () => {
function compute() { return 1 + 2; }
return compute();
}