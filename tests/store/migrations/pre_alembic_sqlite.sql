PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE files (
	id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, 
	mandate_id INTEGER NOT NULL, 
	user_id INTEGER NOT NULL, 
	name VARCHAR NOT NULL, 
	ext VARCHAR NOT NULL, 
	mime VARCHAR NOT NULL, 
	size BIGINT NOT NULL, 
	sha256 VARCHAR NOT NULL, 
	origin VARCHAR NOT NULL, 
	created_at DATETIME NOT NULL
);
INSERT INTO files VALUES(1,1,1,'minimal-document','pdf','application/pdf',16978,'f723638db6e763cf4ccadad38a3d38a02d9ecab95dab1f0bbf00e801991b5f92','upload','2026-11-23 00:12:33.505417');
INSERT INTO files VALUES(2,1,1,'stanley-cups','tsv','text/tab-separated-values',91,'511a422c3f5ee11b9b828aac404da5157944ba53d1594f803ef7017904b9278e','upload','2026-11-23 00:12:33.545940');
CREATE TABLE workflows (
	id VARCHAR NOT NULL, 
	mandate_id INTEGER NOT NULL, 
	user_id INTEGER NOT NULL, 
	name VARCHAR NOT NULL, 
	status VARCHAR NOT NULL, 
	started_at DATETIME NOT NULL, 
	last_activity DATETIME NOT NULL, 
	current_round INTEGER NOT NULL, 
	progress INTEGER NOT NULL, 
	bytes_sent BIGINT NOT NULL, 
	bytes_received BIGINT NOT NULL, 
	tokens_used BIGINT NOT NULL, 
	processing_time FLOAT NOT NULL, 
	last_message_id BIGINT NOT NULL, 
	last_log_id BIGINT NOT NULL, 
	next_sequence_no INTEGER NOT NULL, 
	PRIMARY KEY (id)
);
INSERT INTO workflows VALUES('5945f882-b04a-4725-8db1-39d158e45af8',1,1,'Summarise the documents.','completed','2026-11-23 00:12:33.832912','2026-11-23 00:12:37.901644',2,100,0,0,3065,0.018760999999999999898,8,20,9);
CREATE TABLE extractions (
	"key" VARCHAR NOT NULL, 
	mime VARCHAR NOT NULL, 
	status VARCHAR NOT NULL, 
	items JSON NOT NULL, 
	warnings JSON NOT NULL, 
	PRIMARY KEY ("key")
);
INSERT INTO extractions VALUES('f723638db6e763cf4ccadad38a3d38a02d9ecab95dab1f0bbf00e801991b5f92','application/pdf','ok','[{"sequence_nr":1,"name":"page 1","ext":"txt","content_type":"text/plain","data":"Lorem ipsum dolor sit amet, consetetur sadipscing elitr, sed diam nonumy eirmod\ntempor invidunt ut labore et dolore magna aliquyam erat, sed diam voluptua. At vero\neos et accusam et justo duo dolores et ea rebum. Stet clita kasd gubergren, no sea taki-\nmata sanctus est Lorem ipsum dolor sit amet. Lorem ipsum dolor sit amet, consetetur\nsadipscing elitr, sed diam nonumy eirmod tempor invidunt ut labore et dolore magna\naliquyam erat, sed diam voluptua. At vero eos et accusam et justo duo dolores et ea\nrebum. Stet clita kasd gubergren, no sea takimata sanctus est Lorem ipsum dolor sit\namet.\n1","is_text":true,"base64_encoded":false,"summary":"page 1: 595 characters, 102 words, language fr","metadata":{"extractor":"pypdf","page":1,"ocr":false}}]','[]');
INSERT INTO extractions VALUES('511a422c3f5ee11b9b828aac404da5157944ba53d1594f803ef7017904b9278e','text/tab-separated-values','ok','[{"sequence_nr":1,"name":"table","ext":"tsv","content_type":"text/tab-separated-values","data":"Stanley Cups\nTeam\tLocation\tStanley Cups\nBlues\tSTL\t1\nFlyers\tPHI\t2\nMaple Leafs\tTOR\t13","is_text":true,"base64_encoded":false,"summary":"table: 83 characters, 16 words","metadata":{"extractor":"csv","encoding":"utf-8","rows":5,"ocr":false,"tables":[{"name":"table","source":"table","headerRow":1,"rows":[["Stanley Cups"],["Team","Location","Stanley Cups"],["Blues","STL",1],["Flyers","PHI",2],["Maple Leafs","TOR",13]],"delimiter":"\t"}]}}]','[]');
CREATE TABLE idempotency (
	"key" VARCHAR NOT NULL, 
	response JSON NOT NULL, 
	created_at DATETIME NOT NULL, 
	fingerprint VARCHAR NOT NULL, 
	workflow_id VARCHAR, 
	PRIMARY KEY ("key")
);
CREATE TABLE chunks (
	id INTEGER NOT NULL, 
	sha256 VARCHAR NOT NULL, 
	seq INTEGER NOT NULL, 
	text VARCHAR NOT NULL, 
	terms VARCHAR NOT NULL, 
	length INTEGER NOT NULL, 
	language VARCHAR NOT NULL, 
	page INTEGER, 
	sheet VARCHAR, 
	section VARCHAR, 
	PRIMARY KEY (id)
);
INSERT INTO chunks VALUES(1,'f723638db6e763cf4ccadad38a3d38a02d9ecab95dab1f0bbf00e801991b5f92',0,'Lorem ipsum dolor sit amet, consetetur sadipscing elitr, sed diam nonumy eirmod tempor invidunt ut labore et dolore magna aliquyam erat, sed diam voluptua. At vero eos et accusam et justo duo dolores et ea rebum. Stet clita kasd gubergren, no sea taki- mata sanctus est Lorem ipsum dolor sit amet. Lorem ipsum dolor sit amet, consetetur sadipscing elitr, sed diam nonumy eirmod tempor invidunt ut labore et dolore magna aliquyam erat, sed diam voluptua. At vero eos et accusam et justo duo dolores et ea rebum.','lorem ipsum dolor sit amet consetetur sadipscing elitr sed diam nonumy eirmod tempor invidunt ut labore et dolore magna aliquyam erat sed diam voluptua at vero eos et accusam et justo duo dolores et ea rebum stet clita kasd gubergren no sea taki mata sanctus est lorem ipsum dolor sit amet lorem ipsum dolor sit amet consetetur sadipscing elitr sed diam nonumy eirmod tempor invidunt ut labore et dolore magna aliquyam erat sed diam voluptua at vero eos et accusam et justo duo dolores et ea rebum',87,'la',1,NULL,NULL);
INSERT INTO chunks VALUES(2,'f723638db6e763cf4ccadad38a3d38a02d9ecab95dab1f0bbf00e801991b5f92',1,'Stet clita kasd gubergren, no sea takimata sanctus est Lorem ipsum dolor sit amet. 1','stet clita kasd gubergren no sea takimata sanctus est lorem ipsum dolor sit amet 1',15,'la',1,NULL,NULL);
INSERT INTO chunks VALUES(3,'511a422c3f5ee11b9b828aac404da5157944ba53d1594f803ef7017904b9278e',0,'Stanley Cups Team Location Stanley Cups Blues STL 1 Flyers PHI 2 Maple Leafs TOR 13','stanley cup team locat stanley cup blue stl 1 flyer phi 2 mapl leaf tor 13',16,'en',NULL,NULL,'table');
PRAGMA writable_schema=ON;
INSERT INTO sqlite_schema(type,name,tbl_name,rootpage,sql)VALUES('table','chunks_fts','chunks_fts',0,'CREATE VIRTUAL TABLE chunks_fts USING fts5(terms, tokenize = ''unicode61 remove_diacritics 0'')');
CREATE TABLE IF NOT EXISTS 'chunks_fts_data'(id INTEGER PRIMARY KEY, block BLOB);
INSERT INTO chunks_fts_data VALUES(1,X'0376');
INSERT INTO chunks_fts_data VALUES(10,X'000000000102020002010101020101');
INSERT INTO chunks_fts_data VALUES(137438953473,X'000001db02303102021001076163637573616d01041e3502076c69717579616d0104153502036d6574010606300701020f02017401041a350105636c69746101022701020302096f6e736574657475720104073501046469616d01080b0f280f02046f6c6f72010604300701020d06016501041335070173010422350202756f010421350102656101042435020569726d6f6401040d3502046c6974720104093502026f7301041c350203726174010416350202737401022f01020a0201740110120d0406240d0406010967756265726772656e0102290102050108696e766964756e7401040f3502047073756d010603300701020c01056a7573746f0104203501046b61736401022801020401066c61626f72650104113502046f72656d010602300701020b01056d61676e61010414350302746101022d01026e6f01022a01020603046e756d7901040c350105726562756d01042535010a73616469707363696e670104083503056e6374757301022e0102090202656101022b01020703016401080a0f280f02026974010605300701020e0203746574010226010202010474616b6901022c05046d6174610202080205656d706f7201040e35010275740104103501047665726f01041b3502076f6c75707475610104193504060d0d0d070d0f0c0e070708080b0a08090a0d110e0e0b0c0c0e0b070a0a0b100d0a090c0b09090b080a');
INSERT INTO chunks_fts_data VALUES(274877906945,X'0000007802303103020a02013303021101013203020d0104626c75650302080103637570030403060105666c79657203020b01046c65616603020f02046f63617403020501046d61706c03020e010370686903020c01077374616e6c65790304020603016c03020901047465616d03020402026f720302100406060609090a090909080d0609');
CREATE TABLE IF NOT EXISTS 'chunks_fts_idx'(segid, term, pgno, PRIMARY KEY(segid, term)) WITHOUT ROWID;
INSERT INTO chunks_fts_idx VALUES(1,X'',2);
INSERT INTO chunks_fts_idx VALUES(2,X'',2);
CREATE TABLE IF NOT EXISTS 'chunks_fts_content'(id INTEGER PRIMARY KEY, c0);
INSERT INTO chunks_fts_content VALUES(1,'lorem ipsum dolor sit amet consetetur sadipscing elitr sed diam nonumy eirmod tempor invidunt ut labore et dolore magna aliquyam erat sed diam voluptua at vero eos et accusam et justo duo dolores et ea rebum stet clita kasd gubergren no sea taki mata sanctus est lorem ipsum dolor sit amet lorem ipsum dolor sit amet consetetur sadipscing elitr sed diam nonumy eirmod tempor invidunt ut labore et dolore magna aliquyam erat sed diam voluptua at vero eos et accusam et justo duo dolores et ea rebum');
INSERT INTO chunks_fts_content VALUES(2,'stet clita kasd gubergren no sea takimata sanctus est lorem ipsum dolor sit amet 1');
INSERT INTO chunks_fts_content VALUES(3,'stanley cup team locat stanley cup blue stl 1 flyer phi 2 mapl leaf tor 13');
CREATE TABLE IF NOT EXISTS 'chunks_fts_docsize'(id INTEGER PRIMARY KEY, sz BLOB);
INSERT INTO chunks_fts_docsize VALUES(1,X'57');
INSERT INTO chunks_fts_docsize VALUES(2,X'0f');
INSERT INTO chunks_fts_docsize VALUES(3,X'10');
CREATE TABLE IF NOT EXISTS 'chunks_fts_config'(k PRIMARY KEY, v) WITHOUT ROWID;
INSERT INTO chunks_fts_config VALUES('version',4);
CREATE TABLE messages (
	id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, 
	workflow_id VARCHAR NOT NULL, 
	"key" VARCHAR NOT NULL, 
	round INTEGER NOT NULL, 
	parent_message_id BIGINT, 
	started_at DATETIME NOT NULL, 
	finished_at DATETIME, 
	sequence_no INTEGER NOT NULL, 
	status VARCHAR NOT NULL, 
	role VARCHAR NOT NULL, 
	content VARCHAR NOT NULL, 
	agent_name VARCHAR NOT NULL, 
	bytes_sent INTEGER NOT NULL, 
	bytes_received INTEGER NOT NULL, 
	tokens_used INTEGER NOT NULL, 
	processing_time FLOAT NOT NULL, 
	meta JSON NOT NULL, 
	deleted BOOLEAN NOT NULL, 
	FOREIGN KEY(workflow_id) REFERENCES workflows (id) ON DELETE CASCADE, 
	UNIQUE ("key")
);
INSERT INTO messages VALUES(1,'5945f882-b04a-4725-8db1-39d158e45af8','5945f882-b04a-4725-8db1-39d158e45af8:1:prepare:message',1,NULL,'2026-11-23 00:12:33.832912','2026-11-23 00:12:33.832912',1,'first','user','Summarise the documents.','',0,0,0,0.0,'{}',0);
INSERT INTO messages VALUES(2,'5945f882-b04a-4725-8db1-39d158e45af8','5945f882-b04a-4725-8db1-39d158e45af8:1:plan:message',1,1,'2026-11-23 00:12:37.750751','2026-11-23 00:12:37.756427',2,'step','assistant',replace('I am working offline, without a language model: I can quote, extract and compile from your documents, but I cannot write new prose or translate. I have planned 1 step: summarise minimal-document.pdf, stanley-cups.tsv.\n\n### Work plan\n\n1. **summarizer** `t1`: Summarise minimal-document.pdf, stanley-cups.tsv. Summarise the documents. (inputs: minimal-document.pdf, stanley-cups.tsv)','\n',char(10)),'project_manager',0,0,768,0.0053330000000000000667,'{"offline":true,"model":"offline","language":"en","plan":{"finalDocuments":[],"tasks":[{"id":"t1","agent":"summarizer","instructions":"Summarise minimal-document.pdf, stanley-cups.tsv. Summarise the documents.","inputs":["minimal-document.pdf","stanley-cups.tsv"],"outputs":[],"depends_on":[]}]}}',0);
INSERT INTO messages VALUES(3,'5945f882-b04a-4725-8db1-39d158e45af8','5945f882-b04a-4725-8db1-39d158e45af8:1:task:t1:message',1,1,'2026-11-23 00:12:37.762085','2026-11-23 00:12:37.764584',3,'step','assistant',replace('## Summary of minimal-document.pdf\n\n_Offline extractive summary: the document''s most informative sentences, quoted verbatim (no language model was used)._\n\n- Lorem ipsum dolor sit amet, consetetur sadipscing elitr, sed diam nonumy eirmod tempor invidunt ut labore et dolore magna aliquyam erat, sed diam voluptua.\n- At vero eos et accusam et justo duo dolores et ea rebum.\n- Stet clita kasd gubergren, no sea takimata sanctus est Lorem ipsum dolor sit amet.\n- 1\n\n## Summary of stanley-cups.tsv\n\n_Offline extractive summary: the document''s most informative sentences, quoted verbatim (no language model was used)._\n\n- Stanley Cups\n- Team Location Stanley Cups\n- Blues STL 1\n- Flyers PHI 2\n- Maple Leafs TOR 13','\n',char(10)),'summarizer',0,0,459,0.0023040000000000000583,'{"taskId":"t1","offline":true,"model":"offline"}',0);
INSERT INTO messages VALUES(4,'5945f882-b04a-4725-8db1-39d158e45af8','5945f882-b04a-4725-8db1-39d158e45af8:1:final:message',1,1,'2026-11-23 00:12:37.767937','2026-11-23 00:12:37.768874',4,'last','assistant',replace('This round ran offline, without a language model: the results are extracts from your documents, not generated text. The planned step is done.\n\n**Delivered:** no documents\n\n**Completed steps:** t1 (summarizer)','\n',char(10)),'project_manager',0,0,451,0.00079699999999999996541,'{"offline":true,"model":"offline"}',0);
INSERT INTO messages VALUES(5,'5945f882-b04a-4725-8db1-39d158e45af8','5945f882-b04a-4725-8db1-39d158e45af8:2:prepare:message',2,NULL,'2026-11-23 00:12:37.865545','2026-11-23 00:12:37.865545',5,'first','user','Which team won in 1990?','',0,0,0,0.0,'{}',0);
INSERT INTO messages VALUES(6,'5945f882-b04a-4725-8db1-39d158e45af8','5945f882-b04a-4725-8db1-39d158e45af8:2:plan:message',2,5,'2026-11-23 00:12:37.883307','2026-11-23 00:12:37.887166',6,'step','assistant',replace('I am working offline, without a language model: I can quote, extract and compile from your documents, but I cannot write new prose or translate. I have planned 1 step: answer your question from minimal-document.pdf, stanley-cups.tsv.\n\n### Work plan\n\n1. **analyst** `t1`: Which team won in 1990? (inputs: minimal-document.pdf, stanley-cups.tsv)','\n',char(10)),'project_manager',0,0,920,0.0035300000000000001515,'{"offline":true,"model":"offline","language":"en","plan":{"finalDocuments":[],"tasks":[{"id":"t1","agent":"analyst","instructions":"Which team won in 1990?","inputs":["minimal-document.pdf","stanley-cups.tsv"],"outputs":[],"depends_on":[]}]}}',0);
INSERT INTO messages VALUES(7,'5945f882-b04a-4725-8db1-39d158e45af8','5945f882-b04a-4725-8db1-39d158e45af8:2:task:t1:message',2,5,'2026-11-23 00:12:37.890965','2026-11-23 00:12:37.897388',7,'step','assistant',replace('_Offline answer: without a language model I quote the passages of your documents that best match the question._\n\n> Stanley Cups Team Location Stanley Cups Blues STL 1 Flyers PHI 2 Maple Leafs TOR 13\n\n— stanley-cups.tsv, table [1]','\n',char(10)),'analyst',0,0,149,0.0062329999999999998253,'{"citations":[{"fileId":2,"name":"stanley-cups.tsv","section":"table","quote":"Stanley Cups Team Location Stanley Cups Blues STL 1 Flyers PHI 2 Maple Leafs TOR 13"}],"taskId":"t1","offline":true,"model":"offline"}',0);
INSERT INTO messages VALUES(8,'5945f882-b04a-4725-8db1-39d158e45af8','5945f882-b04a-4725-8db1-39d158e45af8:2:final:message',2,5,'2026-11-23 00:12:37.900910','2026-11-23 00:12:37.901644',8,'last','assistant',replace('This round ran offline, without a language model: the results are extracts from your documents, not generated text. The planned step is done.\n\n**Delivered:** no documents\n\n**Completed steps:** t1 (analyst)','\n',char(10)),'project_manager',0,0,318,0.00056400000000000004816,'{"offline":true,"model":"offline"}',0);
CREATE TABLE logs (
	id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, 
	workflow_id VARCHAR NOT NULL, 
	"key" VARCHAR NOT NULL, 
	round INTEGER NOT NULL, 
	message VARCHAR NOT NULL, 
	type VARCHAR NOT NULL, 
	timestamp DATETIME NOT NULL, 
	agent_name VARCHAR NOT NULL, 
	status VARCHAR NOT NULL, 
	progress INTEGER, 
	FOREIGN KEY(workflow_id) REFERENCES workflows (id) ON DELETE CASCADE, 
	UNIQUE ("key")
);
INSERT INTO logs VALUES(1,'5945f882-b04a-4725-8db1-39d158e45af8','5945f882-b04a-4725-8db1-39d158e45af8:1:start',1,'Workflow initialized','info','2026-11-23 00:12:33.832912','system','running',0);
INSERT INTO logs VALUES(2,'5945f882-b04a-4725-8db1-39d158e45af8','5945f882-b04a-4725-8db1-39d158e45af8:1:prepare:log',1,'Workflow processing started','info','2026-11-23 00:12:34.257874','system','running',0);
INSERT INTO logs VALUES(3,'5945f882-b04a-4725-8db1-39d158e45af8','5945f882-b04a-4725-8db1-39d158e45af8:1:prepare:file:0:start',1,'Reading minimal-document.pdf (file 1 of 2, 16.6 KB)','info','2026-11-23 00:12:34.261814','extractor','running',1);
INSERT INTO logs VALUES(4,'5945f882-b04a-4725-8db1-39d158e45af8','5945f882-b04a-4725-8db1-39d158e45af8:1:prepare:file:0:done',1,'Read minimal-document.pdf: 1 page in 3.5 s','info','2026-11-23 00:12:37.724235','extractor','running',5);
INSERT INTO logs VALUES(5,'5945f882-b04a-4725-8db1-39d158e45af8','5945f882-b04a-4725-8db1-39d158e45af8:1:prepare:file:1:start',1,'Reading stanley-cups.tsv (file 2 of 2, 91 bytes)','info','2026-11-23 00:12:37.740743','extractor','running',5);
INSERT INTO logs VALUES(6,'5945f882-b04a-4725-8db1-39d158e45af8','5945f882-b04a-4725-8db1-39d158e45af8:1:prepare:file:1:done',1,'Read stanley-cups.tsv: 1 part in 0.0 s','info','2026-11-23 00:12:37.749729','extractor','running',9);
INSERT INTO logs VALUES(7,'5945f882-b04a-4725-8db1-39d158e45af8','5945f882-b04a-4725-8db1-39d158e45af8:1:plan:start',1,'Analyzing request and planning work','info','2026-11-23 00:12:37.750339','project_manager','running',10);
INSERT INTO logs VALUES(8,'5945f882-b04a-4725-8db1-39d158e45af8','5945f882-b04a-4725-8db1-39d158e45af8:1:plan:done',1,'Work plan created: 1 task','info','2026-11-23 00:12:37.756427','project_manager','running',25);
INSERT INTO logs VALUES(9,'5945f882-b04a-4725-8db1-39d158e45af8','5945f882-b04a-4725-8db1-39d158e45af8:1:task:t1:start',1,'Running task 1/1: summarizer','info','2026-11-23 00:12:37.761665','summarizer','running',30);
INSERT INTO logs VALUES(10,'5945f882-b04a-4725-8db1-39d158e45af8','5945f882-b04a-4725-8db1-39d158e45af8:1:task:t1:done',1,'Task 1/1 done: summarizer','info','2026-11-23 00:12:37.764584','summarizer','running',90);
INSERT INTO logs VALUES(11,'5945f882-b04a-4725-8db1-39d158e45af8','5945f882-b04a-4725-8db1-39d158e45af8:1:final:start',1,'Creating final response','info','2026-11-23 00:12:37.767527','project_manager','running',90);
INSERT INTO logs VALUES(12,'5945f882-b04a-4725-8db1-39d158e45af8','5945f882-b04a-4725-8db1-39d158e45af8:1:final:done',1,'Workflow completed successfully','info','2026-11-23 00:12:37.768874','project_manager','completed',100);
INSERT INTO logs VALUES(13,'5945f882-b04a-4725-8db1-39d158e45af8','5945f882-b04a-4725-8db1-39d158e45af8:2:start',2,'Resuming workflow, round 2','info','2026-11-23 00:12:37.865545','system','running',0);
INSERT INTO logs VALUES(14,'5945f882-b04a-4725-8db1-39d158e45af8','5945f882-b04a-4725-8db1-39d158e45af8:2:prepare:log',2,'Workflow processing started','info','2026-11-23 00:12:37.872145','system','running',0);
INSERT INTO logs VALUES(15,'5945f882-b04a-4725-8db1-39d158e45af8','5945f882-b04a-4725-8db1-39d158e45af8:2:plan:start',2,'Analyzing request and planning work','info','2026-11-23 00:12:37.873476','project_manager','running',10);
INSERT INTO logs VALUES(16,'5945f882-b04a-4725-8db1-39d158e45af8','5945f882-b04a-4725-8db1-39d158e45af8:2:plan:done',2,'Work plan created: 1 task','info','2026-11-23 00:12:37.887166','project_manager','running',25);
INSERT INTO logs VALUES(17,'5945f882-b04a-4725-8db1-39d158e45af8','5945f882-b04a-4725-8db1-39d158e45af8:2:task:t1:start',2,'Running task 1/1: analyst','info','2026-11-23 00:12:37.890539','analyst','running',30);
INSERT INTO logs VALUES(18,'5945f882-b04a-4725-8db1-39d158e45af8','5945f882-b04a-4725-8db1-39d158e45af8:2:task:t1:done',2,'Task 1/1 done: analyst','info','2026-11-23 00:12:37.897388','analyst','running',90);
INSERT INTO logs VALUES(19,'5945f882-b04a-4725-8db1-39d158e45af8','5945f882-b04a-4725-8db1-39d158e45af8:2:final:start',2,'Creating final response','info','2026-11-23 00:12:37.900547','project_manager','running',90);
INSERT INTO logs VALUES(20,'5945f882-b04a-4725-8db1-39d158e45af8','5945f882-b04a-4725-8db1-39d158e45af8:2:final:done',2,'Workflow completed successfully','info','2026-11-23 00:12:37.901644','project_manager','completed',100);
CREATE TABLE round_files (
	workflow_id VARCHAR NOT NULL, 
	round INTEGER NOT NULL, 
	prompt VARCHAR NOT NULL, 
	file_ids JSON NOT NULL, 
	passwords JSON NOT NULL, 
	PRIMARY KEY (workflow_id, round), 
	FOREIGN KEY(workflow_id) REFERENCES workflows (id) ON DELETE CASCADE
);
INSERT INTO round_files VALUES('5945f882-b04a-4725-8db1-39d158e45af8',1,'Summarise the documents.','[1,2]','{}');
INSERT INTO round_files VALUES('5945f882-b04a-4725-8db1-39d158e45af8',2,'Which team won in 1990?','[]','{}');
CREATE TABLE documents (
	id VARCHAR NOT NULL, 
	message_id INTEGER NOT NULL, 
	file_id INTEGER NOT NULL, 
	position INTEGER NOT NULL, 
	contents JSON NOT NULL, 
	PRIMARY KEY (id), 
	FOREIGN KEY(message_id) REFERENCES messages (id) ON DELETE CASCADE, 
	FOREIGN KEY(file_id) REFERENCES files (id) ON DELETE CASCADE
);
INSERT INTO documents VALUES('doc_1_0',1,1,0,'[{"sequenceNr":1,"name":"page 1","ext":"txt","contentType":"text/plain","data":"Lorem ipsum dolor sit amet, consetetur sadipscing elitr, sed diam nonumy eirmod\ntempor invidunt ut labore et dolore magna aliquyam erat, sed diam voluptua. At vero\neos et accusam et justo duo dolores et ea rebum. Stet clita kasd gubergren, no sea taki-\nmata sanctus est Lorem ipsum dolor sit amet. Lorem ipsum dolor sit amet, consetetur\nsadipscing elitr, sed diam nonumy eirmod tempor invidunt ut labore et dolore magna\naliquyam erat, sed diam voluptua. At vero eos et accusam et justo duo dolores et ea\nrebum. Stet clita kasd gubergren, no sea takimata sanctus est Lorem ipsum dolor sit\namet.\n1","dataExtracted":null,"metadata":{"extractor":"pypdf","page":1,"ocr":false,"isText":true,"base64Encoded":false,"aiProcessed":false},"summary":"page 1: 595 characters, 102 words, language fr"}]');
INSERT INTO documents VALUES('doc_1_1',1,2,1,'[{"sequenceNr":1,"name":"table","ext":"tsv","contentType":"text/tab-separated-values","data":"Stanley Cups\nTeam\tLocation\tStanley Cups\nBlues\tSTL\t1\nFlyers\tPHI\t2\nMaple Leafs\tTOR\t13","dataExtracted":null,"metadata":{"extractor":"csv","encoding":"utf-8","rows":5,"ocr":false,"tables":[{"name":"table","source":"table","headerRow":1,"rows":[["Stanley Cups"],["Team","Location","Stanley Cups"],["Blues","STL",1],["Flyers","PHI",2],["Maple Leafs","TOR",13]],"delimiter":"\t"}],"isText":true,"base64Encoded":false,"aiProcessed":false},"summary":"table: 83 characters, 16 words"}]');
DELETE FROM sqlite_sequence;
INSERT INTO sqlite_sequence VALUES('files',2);
INSERT INTO sqlite_sequence VALUES('messages',8);
INSERT INTO sqlite_sequence VALUES('logs',20);
CREATE INDEX ix_files_user_id ON files (user_id);
CREATE INDEX ix_files_sha256 ON files (sha256);
CREATE INDEX ix_files_mandate_id ON files (mandate_id);
CREATE INDEX ix_workflows_owner_activity ON workflows (mandate_id, user_id, last_activity);
CREATE INDEX ix_idempotency_workflow_id ON idempotency (workflow_id);
CREATE INDEX ix_chunks_sha_seq ON chunks (sha256, seq);
CREATE INDEX ix_messages_workflow_id ON messages (workflow_id, id);
CREATE INDEX ix_logs_workflow_id ON logs (workflow_id, id);
CREATE INDEX ix_documents_file_id ON documents (file_id);
CREATE INDEX ix_documents_message_id ON documents (message_id);
PRAGMA writable_schema=OFF;
COMMIT;
