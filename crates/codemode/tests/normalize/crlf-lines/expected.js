async () => {
const x = 1;
return (x)
}