"""One small diagram of every type mermaid draws, for the SVG export's
portability tests (tests/modes/test_diagram_portable_svg.py) and its stress
part. Labels start or end with spaces in a few places on purpose."""

from __future__ import annotations

CORPUS: dict[str, str] = {
    "flowchart": "flowchart TD\n  A[Start here] --> B{Is it ok?}\n  B -->|yes| C[\"Done &nbsp;now\"]\n"
                 "  B -->|no| D(( retry ))\n  click C href \"https://example.com\"\n",
    "sequence": "sequenceDiagram\n  participant Alice\n  participant Bob\n  Alice->>Bob: Hello Bob\n"
                "  Bob-->>Alice:  spaced reply\n  Note over Alice,Bob: a note\n",
    "class": "classDiagram\n  class Animal {\n    +String name\n    +eat() void\n  }\n  Animal <|-- Duck\n",
    "state": "stateDiagram-v2\n  [*] --> Still\n  Still --> Moving : push\n  Moving --> [*]\n",
    "er": "erDiagram\n  CUSTOMER ||--o{ ORDER : places\n  ORDER {\n    int id\n    string note\n  }\n",
    "gantt": "gantt\n  title A plan\n  dateFormat YYYY-MM-DD\n  section Build\n"
             "  Design :a1, 2024-01-01, 5d\n  Code :after a1, 7d\n",
    "pie": "pie title Pets\n  \"Dogs\" : 40\n  \"Cats\" : 35\n  \"Fish\" : 25\n",
    "journey": "journey\n  title My day\n  section Morning\n    Make tea: 5: Me\n    Commute: 2: Me, Cat\n",
    "git": "gitGraph\n  commit\n  branch develop\n  checkout develop\n  commit\n  checkout main\n"
           "  merge develop\n",
    "mindmap": "mindmap\n  root((Plans))\n    Work\n      Write\n    Home\n      Cook\n",
    "timeline": "timeline\n  title History\n  2001 : First\n  2005 : Second : Third\n",
    "quadrant": "quadrantChart\n  title Reach\n  x-axis Low --> High\n  y-axis Low --> High\n"
                "  quadrant-1 Expand\n  quadrant-2 Promote\n  quadrant-3 Re-evaluate\n  quadrant-4 Improve\n"
                "  Campaign A: [0.3, 0.6]\n  Campaign B: [0.45, 0.23]\n",
    "sankey": "sankey-beta\n\nSource,Middle,10\nMiddle,Sink A,6\nMiddle,Sink B,4\n",
    "xychart": "xychart-beta\n  title Sales\n  x-axis [jan, feb, mar]\n  y-axis \"Revenue\" 0 --> 100\n"
               "  bar [20, 50, 80]\n  line [20, 50, 80]\n",
    "block": "block-beta\n  columns 3\n  a[\"A block\"] b[\"B\"] c[\"C\"]\n  a --> b\n",
    "requirement": "requirementDiagram\n  requirement test_req {\n    id: 1\n    text: the test text.\n"
                   "    risk: high\n    verifymethod: test\n  }\n  element test_entity {\n    type: simulation\n  }\n"
                   "  test_entity - satisfies -> test_req\n",
    "c4": "C4Context\n  title System Context\n  Person(customer, \"Customer\", \"A person\")\n"
          "  System(bank, \"Bank\", \"The system\")\n  Rel(customer, bank, \"Uses\")\n",
    "architecture": "architecture-beta\n  group api(cloud)[API]\n  service db(database)[Database] in api\n"
                    "  service server(server)[Server] in api\n  db:L -- R:server\n",
    "kanban": "kanban\n  todo[Todo]\n    t1[Write the docs]\n  done[Done]\n    t2[Ship it]\n",
    "packet": "packet-beta\n  0-15: \"Source Port\"\n  16-31: \"Destination Port\"\n",
    "radar": "radar-beta\n  axis A, B, C\n  curve c1{1, 2, 3}\n",
    "treemap": "treemap-beta\n\"Section 1\"\n    \"Leaf 1.1\": 12\n\"Section 2\"\n    \"Leaf 2.1\": 20\n",
    "venn": "venn-beta\n  title Fruit\n  set A[\"Apples\"]\n  set B[\"Bananas\"]\n  union A,B[\"Both\"]\n",
    "ishikawa": "ishikawa-beta\n  Slow builds\n    People\n      Not trained\n    Tools\n      Old compiler\n",
    "wardley": "wardley-beta\n  title Tea shop\n  component Cup [0.73, 0.78]\n  component Tea [0.63, 0.81]\n"
               "  Cup -> Tea\n",
    "tree": "treeView-beta\n  root\n    src\n      main.py\n    docs\n",
    "swimlane": "swimlane-beta\n  A[Start] --> B[Stop]\n",
}
