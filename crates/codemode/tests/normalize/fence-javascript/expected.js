async () => {
const x = 1;
return (x + 2)
}