type UserInput = {
    name: string;
    age?: number;
}