async () => {
const = oops {{{
}