import { createMemoryStore } from "../../src/store/index.js";
import { describeStoreContract } from "./store-contract.js";

describeStoreContract("memory store", (clock) => createMemoryStore({ clock }));
